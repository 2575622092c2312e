CREATE PROCEDURE dw.usp_LoadDimEmployee
AS
BEGIN
    SET NOCOUNT ON;
    DECLARE @now DATETIME2 = SYSDATETIME();

    BEGIN TRAN;

    UPDATE d
       SET d.IsCurrent = 0,
           d.ValidTo = @now
      FROM dw.DimEmployee d
      JOIN stg.Employee s ON s.EmployeeNo = d.EmployeeNo
     WHERE d.IsCurrent = 1
       AND (d.JobTitle <> s.JobTitle OR d.DeptCode <> s.DeptCode);

    INSERT INTO dw.DimEmployee (EmployeeNo, FullName, JobTitle, DeptCode, ValidFrom, ValidTo, IsCurrent)
    SELECT s.EmployeeNo, s.FirstName + ' ' + s.LastName, s.JobTitle, s.DeptCode, @now, NULL, 1
    FROM stg.Employee s
    LEFT JOIN dw.DimEmployee d ON d.EmployeeNo = s.EmployeeNo AND d.IsCurrent = 1
    WHERE d.EmployeeNo IS NULL;

    COMMIT TRAN;
END
GO
