CREATE OR REPLACE PROCEDURE inventory.sync_stock()
RETURNS VARCHAR
LANGUAGE SQL
AS
$$
BEGIN
  MERGE INTO inventory.stock t
  USING (
    WITH latest AS (
      SELECT sku, warehouse, qty, ROW_NUMBER() OVER (PARTITION BY sku, warehouse ORDER BY counted_at DESC) AS rn
      FROM raw.stock_counts
    )
    SELECT l.sku, l.warehouse, l.qty, p.unit_cost
    FROM latest l JOIN raw.products p ON p.sku = l.sku
    WHERE l.rn = 1
  ) s
  ON t.sku = s.sku AND t.warehouse = s.warehouse
  WHEN MATCHED AND s.qty = 0 THEN DELETE
  WHEN MATCHED THEN UPDATE SET t.qty = s.qty, t.stock_value = s.qty * s.unit_cost
  WHEN NOT MATCHED THEN INSERT (sku, warehouse, qty, stock_value)
    VALUES (s.sku, s.warehouse, s.qty, s.qty * s.unit_cost);
  RETURN 'synced';
END;
$$;
