CREATE PROCEDURE crm.usp_LoadLatestAddress
AS
BEGIN
    SET NOCOUNT ON;

    TRUNCATE TABLE crm.CustomerAddress;

    WITH ranked AS (
        SELECT a.CustomerID, a.Street, a.City, a.PostCode, a.ValidFrom,
               ROW_NUMBER() OVER (PARTITION BY a.CustomerID ORDER BY a.ValidFrom DESC) AS rn
        FROM stg.AddressFeed a
    ), cities AS (
        SELECT City, Region FROM ref.Cities
    )
    INSERT INTO crm.CustomerAddress (CustomerID, Street, City, PostCode, Region)
    SELECT r.CustomerID, UPPER(r.Street), r.City, r.PostCode, ISNULL(c.Region, 'UNKNOWN')
    FROM ranked r
    LEFT JOIN cities c ON c.City = r.City
    WHERE r.rn = 1;
END
GO
