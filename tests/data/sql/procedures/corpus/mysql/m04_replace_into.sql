CREATE PROCEDURE catalog.sync_prices()
BEGIN
    REPLACE INTO catalog.product_prices (sku, price, currency, updated_at)
    SELECT f.sku, f.price, f.currency, NOW()
    FROM feeds.supplier_prices f
    WHERE f.price > 0;
END
