-- dialect: spark
INSERT OVERWRITE TABLE dw.fact_orders PARTITION (dt = '2024-01-01')
SELECT o.order_id, o.customer_id, c.segment, SUM(l.qty * l.price) AS gross, COUNT(*) AS lines
FROM ods.orders o JOIN ods.lines l ON o.order_id = l.order_id JOIN ods.customers c ON c.id = o.customer_id
WHERE o.status <> 'CANCELLED' GROUP BY o.order_id, o.customer_id, c.segment;
WITH a AS (SELECT id, name, age FROM tab1 WHERE id > 100), c AS (SELECT id, name, max(age) FROM a GROUP BY a.id, a.name), b AS (SELECT id, name, age FROM tabb2 WHERE age > 28) INSERT INTO tab3 SELECT c.id, concat(c.name, b.name) AS name, b.age FROM b, c WHERE c.id = b.id;
INSERT INTO dw.user_tags SELECT u.user_id, tag FROM ods.users u LATERAL VIEW explode(u.tags) t AS tag;
INSERT INTO dw.user_pos SELECT u.user_id, pos, val FROM ods.users u LATERAL VIEW posexplode(u.scores) s AS pos, val;
INSERT INTO dw.user_kv SELECT u.user_id, k, v FROM ods.users u LATERAL VIEW OUTER explode(u.attrs) a AS k, v;
CREATE TABLE dw.daily_rev AS SELECT to_date(ts) AS d, region, sum(amount) AS revenue FROM ods.payments GROUP BY to_date(ts), region;
CREATE OR REPLACE TEMPORARY VIEW recent AS SELECT * FROM ods.events WHERE ts > current_date() - INTERVAL 7 DAYS;
INSERT INTO dw.event_counts SELECT event_type, count(1) AS n FROM recent GROUP BY event_type;
INSERT INTO dw.ranked SELECT user_id, score, rank() OVER (PARTITION BY team ORDER BY score DESC) AS rk, dense_rank() OVER (ORDER BY score) AS drk FROM ods.scores;
INSERT INTO dw.running SELECT user_id, ts, sum(amount) OVER (PARTITION BY user_id ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running_total FROM ods.payments;
INSERT INTO dw.lagged SELECT user_id, ts, amount - lag(amount, 1, 0) OVER (PARTITION BY user_id ORDER BY ts) AS delta FROM ods.payments;
INSERT INTO dw.bucketed SELECT id, CASE WHEN amount < 10 THEN 'small' WHEN amount < 100 THEN 'medium' ELSE 'large' END AS bucket FROM ods.payments;
INSERT INTO dw.flags SELECT id, if(is_vip, discount * 2, discount) AS eff_discount, nvl(nickname, name) AS display FROM ods.customers;
INSERT INTO dw.union_all SELECT id, 'web' AS channel, amount FROM ods.web_sales UNION ALL SELECT id, 'store', amount FROM ods.store_sales UNION ALL SELECT id, 'catalog', amount FROM ods.catalog_sales;
INSERT INTO dw.active SELECT id FROM ods.users INTERSECT SELECT user_id FROM ods.logins;
INSERT INTO dw.churned SELECT id FROM ods.users EXCEPT SELECT user_id FROM ods.logins WHERE ts > '2024-01-01';
INSERT INTO dw.top_products SELECT p.id, p.name, x.cnt FROM ods.products p JOIN (SELECT product_id, count(*) AS cnt FROM ods.lines GROUP BY product_id HAVING count(*) > 10) x ON p.id = x.product_id ORDER BY x.cnt DESC LIMIT 100;
INSERT INTO dw.with_max SELECT o.id, (SELECT max(l.price) FROM ods.lines l WHERE l.order_id = o.id) AS max_price FROM ods.orders o;
INSERT INTO dw.in_filter SELECT id, name FROM ods.customers WHERE id IN (SELECT customer_id FROM ods.orders WHERE total > 1000);
INSERT INTO dw.not_exists SELECT c.id FROM ods.customers c WHERE NOT EXISTS (SELECT 1 FROM ods.orders o WHERE o.customer_id = c.id);
INSERT INTO dw.cube_sales SELECT region, product, sum(amount) AS s FROM ods.sales GROUP BY CUBE (region, product);
INSERT INTO dw.rollup_sales SELECT year, month, sum(amount) AS s FROM ods.sales GROUP BY ROLLUP (year, month);
INSERT INTO dw.struct_fields SELECT e.payload.user.id AS uid, e.payload.action AS action FROM ods.events e;
INSERT INTO dw.json_fields SELECT get_json_object(raw, '$.user.id') AS uid, from_json(raw, 'a INT').a AS a FROM ods.raw_events;
INSERT INTO dw.arrays SELECT id, size(items) AS n, array_contains(items, 'x') AS has_x, transform(items, x -> upper(x)) AS up FROM ods.baskets;
MERGE INTO dw.customers t USING ods.customer_updates s ON t.id = s.id WHEN MATCHED AND s.op = 'D' THEN DELETE WHEN MATCHED THEN UPDATE SET t.name = s.name, t.email = lower(s.email) WHEN NOT MATCHED THEN INSERT (id, name, email) VALUES (s.id, s.name, lower(s.email));
FROM ods.clicks c INSERT OVERWRITE TABLE dw.clicks_by_page SELECT c.page, count(*) AS n GROUP BY c.page INSERT OVERWRITE TABLE dw.clicks_by_user SELECT c.user_id, count(*) AS n GROUP BY c.user_id;
INSERT INTO dw.dedup SELECT id, name FROM (SELECT id, name, row_number() OVER (PARTITION BY id ORDER BY updated_at DESC) AS rn FROM ods.customers) x WHERE rn = 1;
INSERT INTO dw.pivoted SELECT * FROM (SELECT region, quarter, amount FROM ods.sales) PIVOT (sum(amount) AS total FOR quarter IN ('Q1' AS q1, 'Q2' AS q2, 'Q3' AS q3, 'Q4' AS q4));
INSERT INTO dw.by_name BY NAME SELECT name, id FROM ods.customers;
INSERT INTO dw.casted SELECT cast(id AS BIGINT) AS id, cast(amount AS DECIMAL(10, 2)) AS amount, date_format(ts, 'yyyy-MM') AS ym FROM ods.payments;
INSERT INTO dw.distinct_users SELECT DISTINCT user_id, country FROM ods.logins;
INSERT INTO dw.cross_joined SELECT d.d, p.id FROM dw.dates d CROSS JOIN ods.products p;
INSERT INTO dw.semi SELECT o.* FROM ods.orders o LEFT SEMI JOIN ods.vip v ON o.customer_id = v.id;
INSERT INTO dw.anti SELECT o.id FROM ods.orders o LEFT ANTI JOIN ods.blocked b ON o.customer_id = b.id;
