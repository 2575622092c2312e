CREATE OR REPLACE PROCEDURE finance.post_invoices()
RETURNS VARCHAR
LANGUAGE SQL
AS
$$
BEGIN
  BEGIN TRANSACTION;
  INSERT INTO finance.ledger (invoice_id, account, amount, posted_at)
    SELECT i.invoice_id, i.account, i.amount, CURRENT_TIMESTAMP()
    FROM staging.invoices i
    WHERE i.status = 'READY';
  UPDATE staging.invoices SET status = 'POSTED' WHERE status = 'READY';
  COMMIT;
  RETURN 'ok';
END;
$$;
