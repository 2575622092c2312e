CREATE PROCEDURE shop.purge_abandoned_carts(IN p_days INT)
BEGIN
    INSERT INTO archive.carts (cart_id, customer_id, created_at, item_count)
    SELECT c.id, c.customer_id, c.created_at, COUNT(ci.id)
    FROM shop.carts c
    LEFT JOIN shop.cart_items ci ON ci.cart_id = c.id
    WHERE c.created_at < NOW() - INTERVAL p_days DAY
    GROUP BY c.id, c.customer_id, c.created_at;

    DELETE ci FROM shop.cart_items ci
    JOIN shop.carts c ON c.id = ci.cart_id
    WHERE c.created_at < NOW() - INTERVAL p_days DAY;
END
