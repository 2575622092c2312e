-- SCD1 merge of customers; the changes are captured with OUTPUT into a table variable
-- and only the updates are written to the audit table.
CREATE OR ALTER PROCEDURE dw.usp_MergeCustomer
AS
BEGIN
    SET NOCOUNT ON;
    DECLARE @changes TABLE (ActionType NVARCHAR(10), CustomerID INT, NewEmail NVARCHAR(200));

    MERGE dw.Customer AS tgt
    USING (SELECT CustomerID, FullName, Email, Country FROM stg.Customer WHERE IsValid = 1) AS src
        ON tgt.CustomerID = src.CustomerID
    WHEN MATCHED AND (tgt.Email <> src.Email OR tgt.FullName <> src.FullName) THEN
        UPDATE SET tgt.FullName = src.FullName, tgt.Email = src.Email, tgt.Country = src.Country
    WHEN NOT MATCHED BY TARGET THEN
        INSERT (CustomerID, FullName, Email, Country)
        VALUES (src.CustomerID, src.FullName, src.Email, src.Country)
    OUTPUT $action, inserted.CustomerID, inserted.Email INTO @changes (ActionType, CustomerID, NewEmail);

    INSERT INTO audit.CustomerChanges (CustomerID, Email, ChangedAt)
    SELECT CustomerID, NewEmail, SYSDATETIME()
    FROM @changes
    WHERE ActionType = 'UPDATE';
END
GO
