CREATE PROCEDURE dbo.usp_load_sales
    @batch_id INT,
    @since DATE = NULL
AS
BEGIN
    SET NOCOUNT ON;
    DECLARE @rows INT = 0, @msg NVARCHAR(200);
    DECLARE @changed TABLE (product_id INT, action NVARCHAR(10));

    BEGIN TRY
        BEGIN TRANSACTION;

        MERGE dw.products AS tgt
        USING stg.products AS src ON tgt.product_id = src.product_id
        WHEN MATCHED THEN UPDATE SET tgt.name = src.name
        WHEN NOT MATCHED BY TARGET THEN INSERT (product_id, name) VALUES (src.product_id, src.name)
        OUTPUT inserted.product_id, $action INTO @changed (product_id, action);

        INSERT INTO dw.product_changes (product_id, action)
        SELECT product_id, action FROM @changed WHERE action = 'UPDATE';

        IF @since IS NULL
            SET @since = DATEADD(day, -1, GETDATE())
        ELSE
            PRINT 'since given';

        WHILE @rows < 10
        BEGIN
            SET @rows = @rows + 1;
            IF @rows = 5 BREAK;
        END

        INSERT INTO dw.sales_snapshot (sale_id, amount)
        EXEC stg.usp_get_sales @batch_id;

        COMMIT TRANSACTION;
    END TRY
    BEGIN CATCH
        IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION;
        SET @msg = ERROR_MESSAGE();
        INSERT INTO dw.load_errors (batch_id, message) VALUES (@batch_id, @msg);
        RAISERROR (@msg, 16, 1);
        THROW;
    END CATCH

    RETURN 0;
END
GO
CREATE PROCEDURE [dw].[usp_cleanup] @days INT AS
BEGIN
    DECLARE @id INT, @sql NVARCHAR(MAX);
    DECLARE cur CURSOR LOCAL FAST_FORWARD FOR
        SELECT id FROM stg.expired WHERE note <> 'END';
    OPEN cur;
    FETCH NEXT FROM cur INTO @id;
    WHILE @@FETCH_STATUS = 0
    BEGIN
        DELETE FROM dw.facts WHERE id = @id;
        FETCH NEXT FROM cur INTO @id;
    END;
    CLOSE cur;
    DEALLOCATE cur;

    DELETE f
    FROM dw.facts AS f
    INNER JOIN stg.removed AS r ON r.fact_id = f.id
    WHERE r.removed_at < DATEADD(day, -@days, GETDATE());

    IF EXISTS (SELECT 1 FROM stg.flags WHERE name = 'rebuild')
    BEGIN
        SELECT id, amount INTO #rebuild FROM dw.facts WHERE amount > 0;
        UPDATE s SET s.total = x.amount
        FROM dw.summary s
        JOIN #rebuild x ON x.id = s.id
        LEFT JOIN stg.adjust a ON a.id = s.id;
    END
    ELSE
    BEGIN
        RETURN;
    END

    EXEC sp_executesql N'INSERT INTO dw.log (msg) SELECT note FROM stg.expired';
    EXEC ('INSERT INTO dw.log2 (msg) SELECT ''it''''s; END'' FROM stg.expired');
    SET @sql = N'DELETE FROM dw.facts';
    EXEC sp_executesql @sql;
END;
GO
