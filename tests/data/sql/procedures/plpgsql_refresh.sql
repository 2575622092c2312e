-- PL/pgSQL (PostgreSQL docs, chapter 43: structure of a block, declarations, IF/ELSIF, FOR over a
-- query, EXCEPTION, EXECUTE format, PERFORM, RETURN QUERY).
CREATE OR REPLACE PROCEDURE mart.refresh_daily(p_since date)
LANGUAGE plpgsql
AS $proc$
DECLARE
    v_rows integer := 0;
    r record;
BEGIN
    CREATE TEMP TABLE recent_orders AS
        SELECT id, customer_id, amount, order_date FROM sales.orders WHERE order_date >= p_since;

    INSERT INTO mart.daily_revenue (day, revenue)
    SELECT order_date, sum(amount) FROM recent_orders GROUP BY order_date;

    SELECT count(*) INTO v_rows FROM mart.daily_revenue;
    IF v_rows > 0 THEN
        UPDATE mart.refresh_log SET rows_loaded = v_rows, refreshed_at = now();
    ELSIF v_rows = 0 THEN
        RAISE NOTICE 'no rows since %', p_since;
    END IF;

    FOR r IN SELECT customer_id FROM sales.refunds LOOP
        DELETE FROM mart.daily_revenue WHERE day = r.customer_id;
    END LOOP;

    PERFORM pg_notify('refreshed', 'mart.daily_revenue');
    EXECUTE format('ANALYZE %I.%I', 'mart', 'daily_revenue');
EXCEPTION
    WHEN unique_violation THEN
        INSERT INTO mart.refresh_errors (message) VALUES (SQLERRM);
END;
$proc$;

CREATE FUNCTION mart.top_customers(n integer) RETURNS TABLE (customer_id int, total numeric)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY SELECT o.customer_id, sum(o.amount) FROM sales.orders o GROUP BY 1 ORDER BY 2 DESC LIMIT n;
END;
$$;

CREATE FUNCTION mart.add_one(i integer) RETURNS integer LANGUAGE sql IMMUTABLE RETURN i + 1;
