CREATE PROCEDURE price.usp_ApplyPriceList
    @ListID INT
AS
BEGIN
    SET NOCOUNT ON;

    MERGE price.CurrentPrice WITH (HOLDLOCK) AS cp
    USING (
        SELECT pl.ProductID, pl.Price, pl.Currency
        FROM price.PriceListLines pl
        WHERE pl.ListID = @ListID
    ) AS src ON cp.ProductID = src.ProductID AND cp.Currency = src.Currency
    WHEN MATCHED AND cp.Price <> src.Price THEN
        UPDATE SET cp.Price = src.Price, cp.ChangedOn = SYSUTCDATETIME()
    WHEN NOT MATCHED BY TARGET THEN
        INSERT (ProductID, Currency, Price, ChangedOn)
        VALUES (src.ProductID, src.Currency, src.Price, SYSUTCDATETIME())
    OUTPUT inserted.ProductID, deleted.Price, inserted.Price
        INTO price.PriceChangeLog (ProductID, OldPrice, NewPrice);
END
GO
