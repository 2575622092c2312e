SET ANSI_NULLS ON
GO
SET QUOTED_IDENTIFIER ON
GO
IF OBJECT_ID('hr.usp_LoadHeadcount', 'P') IS NOT NULL
    DROP PROCEDURE hr.usp_LoadHeadcount
GO
CREATE PROCEDURE hr.usp_LoadHeadcount
AS
BEGIN
    SET NOCOUNT ON

    INSERT INTO hr.Headcount (DeptID, DeptName, Employees)
    SELECT d.DeptID, d.Name, COUNT(e.EmployeeID)
    FROM hr.Departments d
    LEFT JOIN hr.Employees e ON e.DeptID = d.DeptID AND e.TerminatedOn IS NULL
    GROUP BY d.DeptID, d.Name
END
GO
GRANT EXECUTE ON hr.usp_LoadHeadcount TO etl_role
GO
