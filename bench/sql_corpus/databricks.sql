-- dialect: databricks
MERGE INTO gold.customers t USING silver.customers s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
CREATE OR REPLACE TABLE gold.orders_enriched AS SELECT o.*, c.segment FROM silver.orders o JOIN silver.customers c ON c.id = o.customer_id;
INSERT INTO gold.exploded SELECT id, explode(items) AS item FROM silver.carts;
INSERT INTO gold.inline SELECT id, col.sku, col.qty FROM silver.carts LATERAL VIEW inline(items) col;
CREATE MATERIALIZED VIEW gold.mv_sales AS SELECT region, sum(amount) AS total FROM silver.sales GROUP BY region;
INSERT OVERWRITE gold.snapshot SELECT * FROM silver.orders VERSION AS OF 12;
INSERT INTO gold.replace_where REPLACE WHERE dt = '2024-01-01' SELECT * FROM silver.orders WHERE dt = '2024-01-01';
CREATE TABLE gold.ctas_cols (id BIGINT, total DOUBLE) AS SELECT customer_id, sum(amount) FROM silver.orders GROUP BY customer_id;
CREATE OR REPLACE TABLE gold.orders_backup DEEP CLONE silver.orders VERSION AS OF 12;
