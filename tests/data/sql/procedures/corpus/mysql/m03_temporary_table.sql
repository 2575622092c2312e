CREATE PROCEDURE analytics.build_funnel(IN p_from DATE, IN p_to DATE)
BEGIN
    DROP TEMPORARY TABLE IF EXISTS tmp_visits;
    CREATE TEMPORARY TABLE tmp_visits AS
        SELECT v.session_id, v.user_id, v.landing_page, v.visited_at
        FROM web.visits v
        WHERE v.visited_at BETWEEN p_from AND p_to;

    INSERT INTO analytics.funnel_daily (day, landing_page, sessions, signups)
    SELECT DATE(t.visited_at), t.landing_page, COUNT(DISTINCT t.session_id), COUNT(DISTINCT s.user_id)
    FROM tmp_visits t
    LEFT JOIN web.signups s ON s.session_id = t.session_id
    GROUP BY DATE(t.visited_at), t.landing_page;

    DROP TEMPORARY TABLE tmp_visits;
END
