CREATE OR REPLACE FUNCTION api.customer_orders(p_customer_id bigint)
RETURNS TABLE (order_id bigint, order_date date, total numeric)
LANGUAGE plpgsql
STABLE
AS $function$
BEGIN
    INSERT INTO api.access_log (customer_id, accessed_at) VALUES (p_customer_id, now());
    RETURN QUERY
    SELECT o.order_id, o.order_date, o.total
    FROM sales.orders o
    WHERE o.customer_id = p_customer_id
    ORDER BY o.order_date DESC;
END;
$function$;
