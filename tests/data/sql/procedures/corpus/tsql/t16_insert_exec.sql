CREATE PROCEDURE rpt.usp_CollectServerStats
AS
BEGIN
    SET NOCOUNT ON;
    CREATE TABLE #who (SPID INT, Status NVARCHAR(50), LoginName SYSNAME, HostName SYSNAME,
                       BlkBy NVARCHAR(10), DBName SYSNAME NULL, Command NVARCHAR(100));

    INSERT INTO #who (SPID, Status, LoginName, HostName, BlkBy, DBName, Command)
    EXEC sp_who;

    INSERT INTO rpt.SessionCounts (LoginName, Sessions, CapturedAt)
    SELECT w.LoginName, COUNT(*), GETDATE()
    FROM #who w
    GROUP BY w.LoginName;

    INSERT INTO rpt.KnownLogins (LoginName, Team)
    SELECT l.LoginName, l.Team
    FROM adm.Logins l
    WHERE NOT EXISTS (SELECT 1 FROM rpt.KnownLogins k WHERE k.LoginName = l.LoginName);
END
GO
