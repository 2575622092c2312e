CREATE PROCEDURE sec.usp_LoadUserRoles
WITH EXECUTE AS OWNER
AS
BEGIN
    SET NOCOUNT ON;

    INSERT INTO sec.UserRoles (UserName, RoleName, GrantedAt)
    SELECT u.UserName, r.RoleName, SYSDATETIME()
    FROM idm.Users u
    JOIN idm.RoleAssignments ra ON ra.UserID = u.UserID
    JOIN idm.Roles r ON r.RoleID = ra.RoleID
    WHERE u.Enabled = 1;
END
GO
