CREATE PROCEDURE shop.refresh_order_totals(IN p_day DATE)
BEGIN
    DECLARE v_rows INT DEFAULT 0;

    INSERT INTO shop.order_totals (order_id, customer_id, items, total)
    SELECT o.id, o.customer_id, COUNT(*), SUM(i.qty * i.price)
    FROM shop.orders o
    JOIN shop.order_items i ON i.order_id = o.id
    WHERE DATE(o.created_at) = p_day
    GROUP BY o.id, o.customer_id;

    UPDATE shop.customers c
    JOIN shop.order_totals t ON t.customer_id = c.id
    SET c.last_order_total = t.total,
        c.updated_at = NOW();

    SET v_rows = ROW_COUNT();
END
