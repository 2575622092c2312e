CREATE OR REPLACE PROCEDURE mart.rebuild_daily_kpis()
RETURNS VARCHAR
LANGUAGE SQL
AS
$$
BEGIN
  CREATE OR REPLACE TABLE mart.daily_kpis_new AS
    SELECT d.day, COUNT(DISTINCT o.customer_id) AS buyers, SUM(o.amount) AS revenue
    FROM ref.calendar d
    LEFT JOIN raw.orders o ON o.order_date = d.day
    GROUP BY d.day;
  INSERT OVERWRITE INTO mart.kpi_latest (day, revenue)
    SELECT day, revenue FROM mart.daily_kpis_new ORDER BY day DESC LIMIT 1;
  RETURN 'ok';
END;
$$;
