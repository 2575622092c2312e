CREATE OR REPLACE FUNCTION billing.close_period(p_period text)
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    r record;
    n integer := 0;
BEGIN
    FOR r IN SELECT a.account_id FROM billing.accounts a WHERE a.status = 'active' LOOP
        UPDATE billing.invoices SET closed = true
        WHERE account_id = r.account_id AND period = p_period;
        n := n + 1;
    END LOOP;

    INSERT INTO billing.period_totals (period, account_id, amount)
    SELECT i.period, i.account_id, sum(i.amount)
    FROM billing.invoices i
    WHERE i.period = p_period
    GROUP BY i.period, i.account_id;
    RETURN n;
END;
$$;
