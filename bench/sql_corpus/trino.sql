-- dialect: trino
INSERT INTO hive.mart.events_by_day SELECT date(from_unixtime(ts)) AS day, event_type, count(*) AS n FROM kafka.raw.events GROUP BY 1, 2;
CREATE TABLE iceberg.mart.user_tags AS SELECT u.id, t.tag FROM postgres.app.users u CROSS JOIN UNNEST(u.tags) AS t(tag);
CREATE TABLE iceberg.mart.kv AS SELECT u.id, k, v FROM postgres.app.users u CROSS JOIN UNNEST(u.props) AS p(k, v);
INSERT INTO iceberg.mart.approx SELECT region, approx_distinct(user_id) AS users, approx_percentile(latency, 0.99) AS p99 FROM kafka.raw.requests GROUP BY region;
INSERT INTO iceberg.mart.tried SELECT id, try_cast(amount AS double) AS amount, coalesce(try(json_extract_scalar(doc, '$.name')), 'unknown') AS name FROM hive.raw.docs;
INSERT INTO iceberg.mart.row_fields SELECT r.id, r.addr.city AS city FROM hive.raw.people r;
MERGE INTO iceberg.mart.accounts a USING hive.raw.transfers t ON a.id = t.account_id WHEN MATCHED THEN UPDATE SET balance = a.balance + t.amount WHEN NOT MATCHED THEN INSERT (id, balance) VALUES (t.account_id, t.amount);
INSERT INTO iceberg.mart.windowed SELECT id, ts, avg(v) OVER (PARTITION BY id ORDER BY ts RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW) AS avg_1h FROM hive.raw.metrics;
INSERT INTO iceberg.mart.filtered SELECT id, count_if(ok) AS oks, sum(v) FILTER (WHERE ok) AS good_v FROM hive.raw.checks GROUP BY id;
INSERT INTO iceberg.mart.transformed SELECT id, transform(items, x -> x.price * x.qty) AS line_totals, reduce(items, 0, (s, x) -> s + x.qty, s -> s) AS qty FROM hive.raw.carts;
INSERT INTO iceberg.mart.grouped SELECT region, channel, sum(amount) AS s FROM hive.raw.sales GROUP BY GROUPING SETS ((region, channel), (region), ());
INSERT INTO iceberg.mart.values_cte WITH v (id, name) AS (VALUES (1, 'a'), (2, 'b')) SELECT id, name FROM v;
