-- T-SQL (SQL Server docs: CREATE PROCEDURE, TRY...CATCH, IF...ELSE, WHILE, table variables,
-- sp_executesql). Statements end without semicolons, as T-SQL allows.
CREATE OR ALTER PROCEDURE dw.load_customers
    @since DATE = NULL
AS
BEGIN
    SET NOCOUNT ON;
    DECLARE @changes TABLE (customer_id INT, action NVARCHAR(10))
    DECLARE @sql NVARCHAR(MAX)
    BEGIN TRY
        IF @since IS NOT NULL
        BEGIN
            SELECT id, name, email INTO #recent FROM stg.customers WHERE updated_at >= @since
        END
        ELSE
            SELECT id, name, email INTO #recent FROM stg.customers

        MERGE INTO dw.customers AS t
        USING #recent AS s ON t.id = s.id
        WHEN MATCHED THEN UPDATE SET t.name = s.name, t.email = lower(s.email)
        WHEN NOT MATCHED THEN INSERT (id, name, email) VALUES (s.id, s.name, s.email);

        INSERT INTO @changes (customer_id, action) SELECT id, 'load' FROM #recent
        INSERT INTO dw.customer_audit (customer_id, action) SELECT customer_id, action FROM @changes

        SET @sql = N'DELETE FROM dw.customers_stale WHERE loaded < GETDATE() - 30'
        EXEC sp_executesql @sql
    END TRY
    BEGIN CATCH
        INSERT INTO dw.load_errors (error_number, error_message)
        SELECT ERROR_NUMBER(), ERROR_MESSAGE()
    END CATCH
END
GO

CREATE PROCEDURE dw.purge_counts AS
    DECLARE @i INT = 0
    WHILE @i < 3
    BEGIN
        INSERT INTO dw.counts (n, total) SELECT @i, count(*) FROM dw.customers
        SET @i = @i + 1
    END
    EXEC (N'INSERT INTO dw.scratch (id) SELECT id FROM dw.customers')
GO

SELECT count(*) FROM dw.customers
