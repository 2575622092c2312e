-- dialect: bigquery
INSERT INTO `proj.mart.sessions` (user_id, session_start, events) SELECT user_id, MIN(event_ts), COUNT(*) FROM `proj.raw.events` GROUP BY user_id;
CREATE OR REPLACE TABLE mart.items AS SELECT o.order_id, item.sku, item.qty FROM raw.orders o, UNNEST(o.items) AS item;
CREATE OR REPLACE TABLE mart.item_offsets AS SELECT o.order_id, sku, off FROM raw.orders o CROSS JOIN UNNEST(o.skus) AS sku WITH OFFSET AS off;
INSERT INTO mart.structs SELECT user.id AS uid, user.address.city AS city FROM raw.users_nested;
MERGE mart.inventory t USING raw.inventory_updates s ON t.sku = s.sku WHEN MATCHED THEN UPDATE SET qty = t.qty + s.delta WHEN NOT MATCHED THEN INSERT (sku, qty) VALUES (s.sku, s.delta);
INSERT INTO mart.qualified SELECT user_id, event_ts FROM raw.events WHERE TRUE QUALIFY ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY event_ts) = 1;
INSERT INTO mart.safe_div SELECT region, SAFE_DIVIDE(SUM(revenue), SUM(orders)) AS aov FROM raw.region_stats GROUP BY region;
INSERT INTO mart.array_agg SELECT user_id, ARRAY_AGG(DISTINCT page IGNORE NULLS) AS pages FROM raw.pageviews GROUP BY user_id;
CREATE VIEW mart.v_recent AS SELECT * EXCEPT (raw_payload) FROM raw.events WHERE event_ts > TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 1 DAY);
INSERT INTO mart.countif SELECT user_id, COUNTIF(event = 'buy') AS buys, LOGICAL_OR(event = 'refund') AS refunded FROM raw.events GROUP BY user_id;
INSERT INTO mart.dates SELECT d, EXTRACT(DAYOFWEEK FROM d) AS dow FROM UNNEST(GENERATE_DATE_ARRAY('2024-01-01', '2024-12-31')) AS d;
UPDATE mart.inventory SET qty = 0 WHERE sku IN (SELECT sku FROM raw.discontinued);
INSERT INTO mart.if_null SELECT id, IFNULL(nickname, name) AS display, IF(age >= 18, 'adult', 'minor') AS grp FROM raw.users;
INSERT INTO mart.ws SELECT user_id, event_ts, LEAD(event_ts) OVER (PARTITION BY user_id ORDER BY event_ts) AS next_ts FROM raw.events;
CREATE SNAPSHOT TABLE mart.users_snap CLONE raw.users FOR SYSTEM_TIME AS OF TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 1 HOUR);
