CREATE OR REPLACE PROCEDURE inv.replace_stock_levels(p_warehouse int)
LANGUAGE plpgsql
AS $$
BEGIN
    DELETE FROM inv.stock_levels sl
    USING inv.stock_feed f
    WHERE f.sku = sl.sku AND sl.warehouse_id = p_warehouse;

    INSERT INTO inv.stock_levels (warehouse_id, sku, qty, counted_at)
    SELECT f.warehouse_id, f.sku, f.qty, f.counted_at
    FROM inv.stock_feed f
    WHERE f.warehouse_id = p_warehouse;
END;
$$;
