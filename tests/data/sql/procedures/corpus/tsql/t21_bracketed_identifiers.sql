CREATE PROCEDURE [dbo].[usp_Load Order Details]
AS
BEGIN
    SET NOCOUNT ON;

    INSERT INTO [rpt].[Order Details] ([Order ID], [Product Name], [Line Total], [Note])
    SELECT od.[OrderID], p.[ProductName], od.[UnitPrice] * od.[Quantity], N'say "hi"; it''s [not] a name'
    FROM [dbo].[Order Details] AS od
    INNER JOIN [dbo].[Products] AS p ON p.[ProductID] = od.[ProductID]
    WHERE p.[Discontinued] = 0;
END
GO
