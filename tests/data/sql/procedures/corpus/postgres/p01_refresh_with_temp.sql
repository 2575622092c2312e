CREATE OR REPLACE PROCEDURE mart.refresh_product_sales(p_since date)
LANGUAGE plpgsql
AS $$
DECLARE
    v_rows integer := 0;
BEGIN
    CREATE TEMP TABLE tmp_sales ON COMMIT DROP AS
        SELECT oi.product_id, o.order_date, oi.quantity, oi.unit_price
        FROM sales.order_items oi
        JOIN sales.orders o ON o.order_id = oi.order_id
        WHERE o.order_date >= p_since;

    INSERT INTO mart.product_sales (product_id, sales_day, units, revenue)
    SELECT t.product_id, t.order_date, sum(t.quantity), sum(t.quantity * t.unit_price)
    FROM tmp_sales t
    GROUP BY t.product_id, t.order_date
    ON CONFLICT (product_id, sales_day)
    DO UPDATE SET units = EXCLUDED.units, revenue = EXCLUDED.revenue;

    GET DIAGNOSTICS v_rows = ROW_COUNT;
    RAISE NOTICE 'refreshed % rows', v_rows;
END;
$$;
