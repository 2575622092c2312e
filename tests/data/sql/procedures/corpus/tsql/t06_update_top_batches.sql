CREATE PROCEDURE queue.usp_ClaimJobs
    @Worker SYSNAME,
    @BatchSize INT = 500
AS
BEGIN
    SET NOCOUNT ON;
    DECLARE @done INT = 0;

    WHILE @done = 0
    BEGIN
        UPDATE TOP (@BatchSize) q
           SET q.ClaimedBy = @Worker,
               q.Priority = p.Priority
          FROM queue.Jobs q
          JOIN queue.JobTypes p ON p.JobType = q.JobType
         WHERE q.ClaimedBy IS NULL;

        IF @@ROWCOUNT < @BatchSize SET @done = 1;
    END

    INSERT INTO queue.ClaimLog (Worker, JobID, JobType)
    SELECT @Worker, JobID, JobType FROM queue.Jobs WHERE ClaimedBy = @Worker;
END
GO
