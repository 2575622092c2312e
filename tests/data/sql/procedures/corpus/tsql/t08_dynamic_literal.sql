CREATE PROCEDURE adm.usp_RebuildSnapshots
AS
BEGIN
    SET NOCOUNT ON;

    EXEC ('INSERT INTO adm.ProductSnapshot (ProductID, ListPrice) SELECT ProductID, ListPrice FROM inv.Products');

    EXEC (N'INSERT INTO adm.StockSnapshot (ProductID, OnHand) SELECT ProductID, SUM(Qty) FROM inv.Stock GROUP BY ProductID');

    PRINT 'snapshots rebuilt';
END
GO
