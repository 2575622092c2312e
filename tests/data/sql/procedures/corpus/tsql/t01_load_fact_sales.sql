CREATE PROCEDURE dw.usp_LoadFactSales
    @LoadDate DATE
AS
BEGIN
    SET NOCOUNT ON;
    DECLARE @rows INT = 0;

    BEGIN TRY
        BEGIN TRANSACTION;

        DELETE FROM dw.FactSales WHERE SaleDate = @LoadDate;

        INSERT INTO dw.FactSales (SaleID, SaleDate, CustomerKey, ProductKey, Quantity, Amount)
        SELECT s.SaleID, s.SaleDate, c.CustomerKey, p.ProductKey, s.Qty, s.Qty * s.UnitPrice
        FROM stg.Sales s
        JOIN dw.DimCustomer c ON c.CustomerCode = s.CustomerCode
        JOIN dw.DimProduct p ON p.ProductCode = s.ProductCode
        WHERE s.SaleDate = @LoadDate;

        SET @rows = @@ROWCOUNT;

        INSERT INTO etl.LoadLog (ProcName, LoadDate, RowsLoaded, Status)
        VALUES ('usp_LoadFactSales', @LoadDate, @rows, 'OK');

        COMMIT TRANSACTION;
    END TRY
    BEGIN CATCH
        IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION;
        INSERT INTO etl.LoadLog (ProcName, LoadDate, RowsLoaded, Status)
        VALUES ('usp_LoadFactSales', @LoadDate, 0, ERROR_MESSAGE());
        THROW;
    END CATCH
END
GO
