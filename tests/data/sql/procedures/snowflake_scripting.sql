-- Snowflake Scripting (Snowflake docs: "Writing stored procedures in Snowflake Scripting",
-- DECLARE / BEGIN / EXCEPTION / END, FOR ... DO, IF ... THEN ... END IF, EXECUTE IMMEDIATE).
CREATE OR REPLACE PROCEDURE analytics.load_orders(min_amount NUMBER)
RETURNS VARCHAR
LANGUAGE SQL
AS
$$
DECLARE
  loaded INTEGER DEFAULT 0;
  table_name VARCHAR DEFAULT 'ANALYTICS.SCRATCH';
BEGIN
  CREATE OR REPLACE TEMPORARY TABLE stage_orders AS
    SELECT order_id, customer_id, amount FROM raw.orders WHERE amount >= :min_amount;
  INSERT INTO analytics.orders (order_id, customer_id, amount)
    SELECT order_id, customer_id, amount FROM stage_orders;
  loaded := SQLROWCOUNT;
  IF (loaded > 0) THEN
    MERGE INTO analytics.customers c USING (SELECT DISTINCT customer_id FROM stage_orders) s
      ON c.customer_id = s.customer_id
      WHEN NOT MATCHED THEN INSERT (customer_id) VALUES (s.customer_id);
  END IF;
  FOR i IN 1 TO 3 DO
    INSERT INTO analytics.load_runs (attempt) SELECT :i;
  END FOR;
  EXECUTE IMMEDIATE 'TRUNCATE TABLE ' || table_name;
  RETURN 'loaded ' || loaded;
EXCEPTION
  WHEN STATEMENT_ERROR THEN
    RETURN 'failed';
END;
$$;
