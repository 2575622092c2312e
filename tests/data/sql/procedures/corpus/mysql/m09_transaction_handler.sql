CREATE PROCEDURE bank.transfer_batch(IN p_batch INT)
BEGIN
    DECLARE EXIT HANDLER FOR SQLEXCEPTION
    BEGIN
        ROLLBACK;
        INSERT INTO bank.batch_errors (batch_id, failed_at) VALUES (p_batch, NOW());
    END;

    START TRANSACTION;
    INSERT INTO bank.ledger (account_id, amount, batch_id)
    SELECT t.from_account, -t.amount, t.batch_id FROM bank.transfers t WHERE t.batch_id = p_batch
    UNION ALL
    SELECT t.to_account, t.amount, t.batch_id FROM bank.transfers t WHERE t.batch_id = p_batch;
    UPDATE bank.transfers SET state = 'BOOKED' WHERE batch_id = p_batch;
    COMMIT;
END
