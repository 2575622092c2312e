CREATE PROC dbo.usp_NightlyInventory
    @AsOf DATE
AS
SET NOCOUNT ON
DELETE FROM dbo.InventoryHistory WHERE AsOf = @AsOf
INSERT INTO dbo.InventoryHistory (AsOf, ItemID, Qty)
SELECT @AsOf, i.ItemID, i.QtyOnHand
FROM dbo.Inventory i
UPDATE dbo.Inventory SET LastCounted = @AsOf
INSERT INTO dbo.InventoryAlerts (ItemID, Qty)
SELECT i.ItemID, i.QtyOnHand FROM dbo.Inventory i WHERE i.QtyOnHand < 0
RETURN 0
GO
