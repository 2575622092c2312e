-- dialect: redshift
INSERT INTO mart.page_stats SELECT page, COUNT(*) AS views, APPROXIMATE COUNT(DISTINCT user_id) AS users FROM raw.pageviews GROUP BY page;
CREATE TABLE mart.user_first AS SELECT user_id, MIN(ts) AS first_seen FROM raw.pageviews GROUP BY user_id;
UPDATE mart.users SET plan = s.plan FROM raw.subscriptions s WHERE mart.users.id = s.user_id;
INSERT INTO mart.nvl SELECT id, NVL(a, b) AS x, DATEDIFF(day, created, updated) AS age_days FROM raw.things;
CREATE VIEW mart.v_late AS SELECT o.id, o.shipped - o.ordered AS delay FROM raw.orders o WHERE o.shipped - o.ordered > 3 WITH NO SCHEMA BINDING;
INSERT INTO mart.median SELECT region, MEDIAN(amount) AS med FROM raw.sales GROUP BY region;
