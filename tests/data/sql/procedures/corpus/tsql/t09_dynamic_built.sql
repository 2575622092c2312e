CREATE PROCEDURE adm.usp_CopyToArchive
    @TableName SYSNAME
AS
BEGIN
    SET NOCOUNT ON;
    DECLARE @sql NVARCHAR(MAX);

    SET @sql = N'INSERT INTO archive.' + QUOTENAME(@TableName)
             + N' SELECT * FROM dbo.' + QUOTENAME(@TableName) + N';';
    EXEC sp_executesql @sql;

    INSERT INTO adm.ArchiveRuns (TableName, RunAt, RowsCopied)
    SELECT @TableName, GETDATE(), COUNT(*) FROM adm.ArchiveQueue WHERE TableName = @TableName;
END
GO
