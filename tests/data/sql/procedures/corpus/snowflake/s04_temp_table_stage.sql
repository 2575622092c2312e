CREATE OR REPLACE PROCEDURE mart.build_customer_ltv()
RETURNS VARCHAR
LANGUAGE SQL
AS
$$
BEGIN
  CREATE OR REPLACE TEMPORARY TABLE tmp_orders AS
    SELECT customer_id, order_id, amount, order_ts
    FROM raw.orders
    WHERE order_ts >= DATEADD(year, -3, CURRENT_DATE());
  CREATE OR REPLACE TEMPORARY TABLE tmp_ltv AS
    SELECT customer_id, SUM(amount) AS lifetime_value, MIN(order_ts) AS first_order
    FROM tmp_orders
    GROUP BY customer_id;
  MERGE INTO mart.customer_ltv t
    USING tmp_ltv s ON t.customer_id = s.customer_id
    WHEN MATCHED THEN UPDATE SET t.lifetime_value = s.lifetime_value, t.first_order = s.first_order
    WHEN NOT MATCHED THEN INSERT (customer_id, lifetime_value, first_order)
      VALUES (s.customer_id, s.lifetime_value, s.first_order);
  RETURN 'done';
END;
$$;
