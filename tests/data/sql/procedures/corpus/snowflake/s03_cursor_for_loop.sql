CREATE OR REPLACE PROCEDURE ops.refresh_regions()
RETURNS INTEGER
LANGUAGE SQL
AS
$$
DECLARE
  c1 CURSOR FOR SELECT region_code FROM ref.regions WHERE active = TRUE;
  n INTEGER DEFAULT 0;
BEGIN
  FOR rec IN c1 DO
    n := n + 1;
  END FOR;
  INSERT INTO mart.region_sales (region_code, total_sales)
    SELECT s.region_code, SUM(s.amount) FROM raw.sales s GROUP BY s.region_code;
  RETURN n;
END;
$$;
