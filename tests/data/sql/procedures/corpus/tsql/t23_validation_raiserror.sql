CREATE PROCEDURE fin.usp_PostJournal
    @BatchID INT
AS
BEGIN
    SET NOCOUNT ON;

    IF NOT EXISTS (SELECT 1 FROM fin.JournalStaging WHERE BatchID = @BatchID)
    BEGIN
        RAISERROR('Batch %d has no lines; nothing to post', 16, 1, @BatchID);
        RETURN -1;
    END

    IF (SELECT SUM(Debit) - SUM(Credit) FROM fin.JournalStaging WHERE BatchID = @BatchID) <> 0
    BEGIN
        THROW 50001, 'Batch is not balanced; END of posting', 1;
    END

    INSERT INTO fin.GeneralLedger (AccountNo, PostingDate, Debit, Credit, BatchID)
    SELECT j.AccountNo, j.PostingDate, j.Debit, j.Credit, j.BatchID
    FROM fin.JournalStaging j
    WHERE j.BatchID = @BatchID;

    RETURN 0;
END
GO
