CREATE OR REPLACE PROCEDURE analytics.refresh_orders(since DATE)
RETURNS TABLE (order_id NUMBER, total NUMBER)
LANGUAGE SQL
AS
$$
DECLARE
  n INTEGER DEFAULT 0;
  c1 CURSOR FOR SELECT order_id FROM raw.orders WHERE order_date >= :since;
  res RESULTSET;
BEGIN
  BEGIN TRANSACTION;
  LET cutoff DATE := DATEADD(day, -7, :since);
  FOR rec IN c1 DO
    n := n + 1;
  END FOR;
  FOR i IN 1 TO 3 DO
    INSERT INTO analytics.ticks (i) VALUES (:i);
  END FOR;
  WHILE (n > 0) DO
    n := n - 1;
  END WHILE;
  INSERT INTO analytics.orders (order_id, total)
    SELECT o.order_id, SUM(l.amount) FROM raw.orders o JOIN raw.lines l ON l.order_id = o.order_id
    WHERE o.status <> 'DELETE' GROUP BY o.order_id;
  IF (n = 0) THEN
    UPDATE analytics.orders SET total = 0 WHERE total IS NULL;
  ELSEIF (n < 0) THEN
    RETURN TABLE(res);
  ELSE
    DELETE FROM analytics.orders WHERE order_id IN (SELECT order_id FROM raw.cancelled);
  END IF;
  EXECUTE IMMEDIATE 'INSERT INTO analytics.audit (msg) SELECT status FROM raw.orders';
  EXECUTE IMMEDIATE :dyn_sql;
  COMMIT;
  res := (SELECT order_id, total FROM analytics.orders_view);
  RETURN TABLE(res);
EXCEPTION
  WHEN statement_error THEN
    ROLLBACK;
    RAISE;
END;
$$;
