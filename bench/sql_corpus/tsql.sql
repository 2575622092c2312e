-- dialect: tsql
SELECT c.CustomerID, c.Name, SUM(o.Total) AS Total INTO #cust_totals FROM dbo.Customers c JOIN dbo.Orders o ON o.CustomerID = c.CustomerID GROUP BY c.CustomerID, c.Name;
INSERT INTO rpt.TopCustomers (CustomerID, Name, Total) SELECT TOP 100 CustomerID, Name, Total FROM #cust_totals ORDER BY Total DESC;
UPDATE t SET t.Status = s.Status, t.UpdatedAt = GETDATE() FROM dbo.Tickets t INNER JOIN stage.TicketStatus s ON s.TicketID = t.TicketID;
MERGE rpt.DimProduct AS tgt USING stage.Products AS src ON tgt.ProductID = src.ProductID WHEN MATCHED THEN UPDATE SET tgt.Name = src.Name, tgt.Price = src.Price WHEN NOT MATCHED BY TARGET THEN INSERT (ProductID, Name, Price) VALUES (src.ProductID, src.Name, src.Price) WHEN NOT MATCHED BY SOURCE THEN DELETE;
WITH ranked AS (SELECT OrderID, CustomerID, ROW_NUMBER() OVER (PARTITION BY CustomerID ORDER BY OrderDate DESC) AS rn FROM dbo.Orders) INSERT INTO rpt.LastOrder (OrderID, CustomerID) SELECT OrderID, CustomerID FROM ranked WHERE rn = 1;
INSERT INTO rpt.Applied SELECT c.CustomerID, x.OrderID FROM dbo.Customers c CROSS APPLY (SELECT TOP 1 OrderID FROM dbo.Orders o WHERE o.CustomerID = c.CustomerID ORDER BY OrderDate DESC) x;
INSERT INTO rpt.OuterApplied SELECT c.CustomerID, x.Cnt FROM dbo.Customers c OUTER APPLY (SELECT COUNT(*) AS Cnt FROM dbo.Orders o WHERE o.CustomerID = c.CustomerID) x;
SELECT * INTO rpt.OrdersCopy FROM dbo.Orders WHERE OrderDate >= '2024-01-01';
INSERT INTO rpt.Iif SELECT OrderID, IIF(Total > 100, 'big', 'small') AS Size, ISNULL(Discount, 0) AS Discount FROM dbo.Orders;
INSERT INTO rpt.Converted SELECT CONVERT(varchar(10), OrderDate, 120) AS Day, CAST(Total AS decimal(18, 2)) AS Total FROM dbo.Orders;
INSERT INTO rpt.Pivoted SELECT * FROM (SELECT Year, Quarter, Total FROM dbo.Sales) s PIVOT (SUM(Total) FOR Quarter IN ([Q1], [Q2], [Q3], [Q4])) p;
CREATE VIEW rpt.vOrders AS SELECT o.OrderID, c.Name, o.Total FROM dbo.Orders o JOIN dbo.Customers c ON c.CustomerID = o.CustomerID;
INSERT INTO rpt.Bracketed ([Order Id], [Customer Name]) SELECT o.[OrderID], c.[Name] FROM [dbo].[Orders] o JOIN [dbo].[Customers] c ON c.[CustomerID] = o.[CustomerID];
INSERT INTO rpt.Strings SELECT CustomerID, STRING_AGG(Email, ';') AS Emails FROM dbo.Contacts GROUP BY CustomerID;
UPDATE dbo.Orders SET Total = Total * 0.9 WHERE CustomerID IN (SELECT CustomerID FROM dbo.VIP);
DELETE FROM dbo.Orders WHERE OrderDate < '2000-01-01';
TRUNCATE TABLE stage.Products;
