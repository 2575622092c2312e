/* Moves audit rows. Notes: BEGIN ... END; GO are words in this comment, as is 'quote */
CREATE PROCEDURE audit.usp_MoveAuditRows
AS
BEGIN
    SET NOCOUNT ON;
    -- a comment with BEGIN TRAN; and END; and a stray ' quote
    PRINT 'BEGIN move; END of the header; GO';

    INSERT INTO audit.DeletedRows (RowID, TableName, ActionType, Payload)
    SELECT a.RowID, a.TableName, a.ActionType, a.Payload
    FROM audit.RawEvents a
    WHERE a.ActionType = 'DELETE';

    INSERT INTO audit.Notes (RowID, Note)
    SELECT a.RowID, 'it''s a ''DELETE''; then END' + a.Payload
    FROM audit.RawEvents a
    WHERE a.TableName = 'GO';
END
GO
