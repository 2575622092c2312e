CREATE OR REPLACE PROCEDURE reporting.top_customers(n INTEGER)
RETURNS TABLE (customer_id NUMBER, revenue NUMBER)
LANGUAGE SQL
AS
$$
DECLARE
  res RESULTSET;
BEGIN
  INSERT INTO reporting.request_log (proc_name, requested_n) VALUES ('top_customers', :n);
  res := (SELECT customer_id, SUM(amount) AS revenue FROM sales.orders GROUP BY customer_id ORDER BY revenue DESC LIMIT :n);
  RETURN TABLE(res);
END;
$$;
