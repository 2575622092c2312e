CREATE PROCEDURE rpt.usp_RefreshRegionTotals
    @Region NVARCHAR(20)
AS
BEGIN
    SET NOCOUNT ON;

    EXEC sp_executesql
        N'INSERT INTO rpt.RegionTotals (Region, Total)
          SELECT s.Region, SUM(s.Amount) FROM sales.Sales s WHERE s.Region = @r GROUP BY s.Region',
        N'@r NVARCHAR(20)',
        @r = @Region;

    EXECUTE sp_executesql N'DELETE FROM rpt.RegionTotals WHERE Total = 0';
END
GO
