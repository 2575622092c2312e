CREATE PROCEDURE dbo.usp_RefreshCreditLimits
AS
BEGIN
    SET NOCOUNT ON;

    UPDATE c
    SET c.CreditLimit = r.ApprovedLimit,
        c.RiskBand = r.Band
    FROM CRM.dbo.Customers c
    JOIN Risk.dbo.CreditReviews r ON r.CustomerID = c.CustomerID
    WHERE r.ReviewStatus = 'APPROVED';

    INSERT INTO CRM.dbo.CreditLimitLog (CustomerID, NewLimit)
    SELECT r.CustomerID, r.ApprovedLimit
    FROM Risk.dbo.CreditReviews r
    WHERE r.ReviewStatus = 'APPROVED';
END;
GO
