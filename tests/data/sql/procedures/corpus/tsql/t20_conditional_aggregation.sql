CREATE PROCEDURE rpt.usp_QuarterlySales
    @Year INT
AS
BEGIN
    SET NOCOUNT ON;

    DELETE FROM rpt.QuarterlySales WHERE SalesYear = @Year;

    INSERT INTO rpt.QuarterlySales (SalesYear, RegionCode, Q1, Q2, Q3, Q4, Total)
    SELECT @Year,
           r.RegionCode,
           SUM(CASE WHEN DATEPART(QUARTER, s.SaleDate) = 1 THEN s.Amount ELSE 0 END),
           SUM(CASE WHEN DATEPART(QUARTER, s.SaleDate) = 2 THEN s.Amount ELSE 0 END),
           SUM(CASE WHEN DATEPART(QUARTER, s.SaleDate) = 3 THEN s.Amount ELSE 0 END),
           SUM(CASE WHEN DATEPART(QUARTER, s.SaleDate) = 4 THEN s.Amount ELSE 0 END),
           SUM(s.Amount)
    FROM sales.Sales s
    JOIN ref.Regions r ON r.RegionID = s.RegionID
    WHERE YEAR(s.SaleDate) = @Year
    GROUP BY r.RegionCode;
END
GO
