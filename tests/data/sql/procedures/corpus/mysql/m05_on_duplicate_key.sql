CREATE PROCEDURE stats.upsert_daily_views(IN p_day DATE)
BEGIN
    INSERT INTO stats.daily_views (day, page_id, views, uniques)
    SELECT p_day, l.page_id, COUNT(*), COUNT(DISTINCT l.visitor_id)
    FROM logs.page_views l
    WHERE l.viewed_on = p_day
    GROUP BY l.page_id
    ON DUPLICATE KEY UPDATE views = VALUES(views), uniques = VALUES(uniques);
END
