CREATE PROCEDURE ops.copy_table_rows(IN p_table VARCHAR(64))
BEGIN
    SET @sql = CONCAT('INSERT INTO backup.', p_table, ' SELECT * FROM prod.', p_table);
    PREPARE stmt FROM @sql;
    EXECUTE stmt;
    DEALLOCATE PREPARE stmt;

    INSERT INTO ops.copy_log (table_name, copied_at, source_rows)
    SELECT p_table, NOW(), t.table_rows
    FROM information_schema.tables t
    WHERE t.table_schema = 'prod' AND t.table_name = p_table;
END
