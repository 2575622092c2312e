CREATE PROCEDURE dbo.usp_CopyPayments
    @Since DATETIME2
AS
BEGIN
    SET NOCOUNT ON;
    SET XACT_ABORT ON;

    BEGIN TRY
        BEGIN TRAN
        INSERT INTO Warehouse.fin.Payments (PaymentID, AccountID, Amount, Currency, PaidAt, Note)
        SELECT p.PaymentID, p.AccountID, p.Amount, COALESCE(p.Currency, 'EUR'),
               p.PaidAt, CONCAT('imported from ', @@SERVERNAME, '; step INSERT')
        FROM Billing.dbo.Payments p
        WHERE p.PaidAt >= @Since
        COMMIT TRAN
    END TRY
    BEGIN CATCH
        IF XACT_STATE() <> 0 ROLLBACK TRAN
        INSERT INTO dbo.EtlErrors (ProcName, ErrorNumber, ErrorMessage)
        VALUES (OBJECT_NAME(@@PROCID), ERROR_NUMBER(), ERROR_MESSAGE())
        ;THROW
    END CATCH
END
GO
