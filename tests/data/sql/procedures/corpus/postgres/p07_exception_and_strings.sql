CREATE OR REPLACE FUNCTION etl.load_payments()
RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    RAISE NOTICE 'starting; will not DELETE or UPDATE anything';
    INSERT INTO finance.payments (payment_id, account_id, amount, method)
    SELECT p.id, p.account_id, p.amount_cents / 100.0, coalesce(p.method, 'UNKNOWN; END')
    FROM staging.payments p
    WHERE p.state = 'INSERT';
EXCEPTION
    WHEN unique_violation THEN
        INSERT INTO etl.load_errors (proc_name, message) VALUES ('load_payments', SQLERRM);
    WHEN others THEN
        RAISE EXCEPTION 'load_payments failed: %', SQLERRM;
END;
$$;
