CREATE PROCEDURE dbo.usp_ArchiveOldOrders
    @Cutoff DATE
AS
BEGIN
    SET NOCOUNT ON;
    DECLARE @batch INT = 5000;

    WHILE 1 = 1
    BEGIN
        DELETE TOP (@batch) FROM dbo.Orders
        OUTPUT deleted.OrderID, deleted.CustomerID, deleted.OrderDate, deleted.Total
            INTO archive.Orders (OrderID, CustomerID, OrderDate, Total)
        WHERE OrderDate < @Cutoff;

        IF @@ROWCOUNT = 0 BREAK;
    END
END
GO
