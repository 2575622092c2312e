CREATE PROCEDURE inv.usp_ReorderSuggestions
AS
BEGIN
    SET NOCOUNT ON;
    DECLARE @low TABLE (
        ProductID INT PRIMARY KEY,
        WarehouseID INT,
        OnHand INT
    );

    INSERT INTO @low (ProductID, WarehouseID, OnHand)
    SELECT s.ProductID, s.WarehouseID, s.Qty
    FROM inv.Stock s
    WHERE s.Qty < s.ReorderPoint;

    INSERT INTO inv.ReorderSuggestion (ProductID, WarehouseID, SuggestedQty, SupplierID)
    SELECT l.ProductID, l.WarehouseID, p.ReorderQty - l.OnHand, p.SupplierID
    FROM @low l
    JOIN inv.Products p ON p.ProductID = l.ProductID;
END
GO
