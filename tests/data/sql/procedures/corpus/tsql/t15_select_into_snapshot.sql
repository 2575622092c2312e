CREATE PROCEDURE rpt.usp_MonthEndSnapshot
    @Month CHAR(7)
AS
BEGIN
    SET NOCOUNT ON;

    IF OBJECT_ID('rpt.BalanceSnapshot', 'U') IS NOT NULL
        DROP TABLE rpt.BalanceSnapshot;

    SELECT a.AccountID, a.Currency, b.Balance, b.AsOfDate
    INTO rpt.BalanceSnapshot
    FROM fin.Accounts a
    JOIN fin.Balances b ON b.AccountID = a.AccountID
    WHERE CONVERT(CHAR(7), b.AsOfDate, 120) = @Month;

    -- result set returned to the caller
    SELECT Currency, SUM(Balance) AS Total
    FROM rpt.BalanceSnapshot
    GROUP BY Currency;

    SELECT TOP 10 AccountID, Balance FROM fin.Balances ORDER BY Balance DESC;
END
GO
