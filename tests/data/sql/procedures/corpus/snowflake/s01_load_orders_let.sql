CREATE OR REPLACE PROCEDURE analytics.load_daily_orders(load_date DATE)
RETURNS VARCHAR
LANGUAGE SQL
EXECUTE AS CALLER
AS
$$
DECLARE
  inserted_rows INTEGER DEFAULT 0;
BEGIN
  LET run_id VARCHAR := UUID_STRING();
  DELETE FROM analytics.daily_orders WHERE order_date = :load_date;
  INSERT INTO analytics.daily_orders (order_date, customer_id, order_count, revenue)
    SELECT o.order_date, o.customer_id, COUNT(*), SUM(o.amount)
    FROM raw.orders o
    WHERE o.order_date = :load_date
    GROUP BY o.order_date, o.customer_id;
  inserted_rows := SQLROWCOUNT;
  INSERT INTO ops.run_log (run_id, proc_name, rows_loaded)
    VALUES (:run_id, 'load_daily_orders', :inserted_rows);
  RETURN 'loaded ' || inserted_rows || ' rows';
END;
$$;
