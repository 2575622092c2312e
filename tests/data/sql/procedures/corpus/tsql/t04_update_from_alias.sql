CREATE PROCEDURE support.usp_SyncTicketStatus
AS
BEGIN
    SET NOCOUNT ON

    UPDATE t
       SET t.Status = s.Status,
           t.AssignedTo = s.Agent,
           t.UpdatedAt = GETDATE()
      FROM support.Tickets t
     INNER JOIN staging.TicketFeed s ON s.TicketID = t.TicketID
     WHERE s.FeedDate = CAST(GETDATE() AS DATE)

    INSERT INTO support.TicketHistory (TicketID, Status, ChangedAt)
    SELECT s.TicketID, s.Status, s.FeedTime
      FROM staging.TicketFeed s
END
GO
