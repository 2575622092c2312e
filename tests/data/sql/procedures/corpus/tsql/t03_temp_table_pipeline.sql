CREATE PROCEDURE rpt.usp_BuildCustomerRevenue
    @FromDate DATE,
    @ToDate DATE
AS
BEGIN
    SET NOCOUNT ON;

    IF OBJECT_ID('tempdb..#orders') IS NOT NULL DROP TABLE #orders;

    SELECT o.OrderID, o.CustomerID, o.OrderDate, o.NetAmount
    INTO #orders
    FROM sales.Orders o
    WHERE o.OrderDate >= @FromDate AND o.OrderDate < @ToDate AND o.Status <> 'X';

    SELECT c.CustomerID, c.Segment, SUM(t.NetAmount) AS Revenue, COUNT(*) AS OrderCount
    INTO #revenue
    FROM #orders t
    JOIN sales.Customers c ON c.CustomerID = t.CustomerID
    GROUP BY c.CustomerID, c.Segment;

    DELETE FROM rpt.CustomerRevenue WHERE PeriodStart = @FromDate;

    INSERT INTO rpt.CustomerRevenue (PeriodStart, CustomerID, Segment, Revenue, OrderCount)
    SELECT @FromDate, r.CustomerID, r.Segment, r.Revenue, r.OrderCount
    FROM #revenue r;

    DROP TABLE #orders;
    DROP TABLE #revenue;
END
GO
