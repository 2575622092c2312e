CREATE PROCEDURE dw.usp_LoadProducts
    @Mode VARCHAR(10) = 'DELTA'
AS
BEGIN
    SET NOCOUNT ON;

    IF @Mode = 'FULL'
    BEGIN
        TRUNCATE TABLE dw.Product;
        INSERT INTO dw.Product (ProductID, ProductName, CategoryName, ListPrice)
        SELECT p.ProductID, p.Name, c.Name, p.ListPrice
        FROM src.Product p
        LEFT JOIN src.Category c ON c.CategoryID = p.CategoryID;
    END
    ELSE
    BEGIN
        MERGE dw.Product AS t
        USING (SELECT p.ProductID, p.Name, c.Name AS CategoryName, p.ListPrice
               FROM src.Product p
               LEFT JOIN src.Category c ON c.CategoryID = p.CategoryID
               WHERE p.ModifiedDate >= DATEADD(DAY, -1, GETDATE())) AS s
        ON t.ProductID = s.ProductID
        WHEN MATCHED THEN UPDATE SET t.ProductName = s.Name, t.CategoryName = s.CategoryName, t.ListPrice = s.ListPrice
        WHEN NOT MATCHED THEN INSERT (ProductID, ProductName, CategoryName, ListPrice)
             VALUES (s.ProductID, s.Name, s.CategoryName, s.ListPrice);
    END
END
GO
