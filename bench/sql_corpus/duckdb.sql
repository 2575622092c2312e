-- dialect: duckdb
CREATE TABLE out.trips_by_hour AS SELECT date_trunc('hour', pickup) AS hour, count(*) AS trips, avg(fare) AS avg_fare FROM read_parquet('trips/*.parquet') GROUP BY ALL;
INSERT INTO out.excluded SELECT * EXCLUDE (secret) FROM raw.users;
INSERT INTO out.by_name BY NAME SELECT fare AS amount, id FROM raw.trips;
CREATE TABLE out.listed AS SELECT id, list_aggregate(scores, 'sum') AS total, unnest(tags) AS tag FROM raw.items;
INSERT INTO out.latest SELECT id, ts, v FROM raw.readings QUALIFY row_number() OVER (PARTITION BY id ORDER BY ts DESC) = 1;
INSERT INTO out.pivot SELECT * FROM (PIVOT raw.sales ON quarter USING sum(amount) GROUP BY region);
CREATE VIEW out.v_struct AS SELECT s.id, s.info.name AS name FROM raw.structs s;
INSERT INTO out.asof SELECT t.id, t.ts, p.price FROM raw.trades t ASOF JOIN raw.prices p ON t.sym = p.sym AND t.ts >= p.ts;
