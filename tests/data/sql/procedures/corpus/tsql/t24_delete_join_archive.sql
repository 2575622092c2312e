CREATE PROCEDURE sales.usp_PurgeCancelledOrders
AS
BEGIN
    SET NOCOUNT ON;

    INSERT INTO archive.CancelledOrders (OrderID, CustomerID, CancelledOn, Reason)
    SELECT o.OrderID, o.CustomerID, c.CancelledOn, c.Reason
    FROM sales.Orders o
    JOIN sales.Cancellations c ON c.OrderID = o.OrderID;

    DELETE o
    FROM sales.Orders o
    JOIN sales.Cancellations c ON c.OrderID = o.OrderID;
END
GO
