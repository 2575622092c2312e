CREATE PROCEDURE etl.usp_ProcessPartitions
AS
BEGIN
    SET NOCOUNT ON;
    DECLARE @PartitionID INT, @Region NVARCHAR(20);

    DECLARE part_cursor CURSOR LOCAL FAST_FORWARD FOR
        SELECT PartitionID, Region FROM etl.PartitionQueue WHERE Processed = 0 ORDER BY PartitionID;

    OPEN part_cursor;
    FETCH NEXT FROM part_cursor INTO @PartitionID, @Region;

    WHILE @@FETCH_STATUS = 0
    BEGIN
        INSERT INTO dw.RegionSales (Region, SaleDate, Amount)
        SELECT s.Region, s.SaleDate, SUM(s.Amount)
        FROM stg.RegionSales s
        WHERE s.PartitionID = @PartitionID
        GROUP BY s.Region, s.SaleDate;

        UPDATE etl.PartitionQueue SET Processed = 1 WHERE PartitionID = @PartitionID;

        FETCH NEXT FROM part_cursor INTO @PartitionID, @Region;
    END

    CLOSE part_cursor;
    DEALLOCATE part_cursor;
END
GO
