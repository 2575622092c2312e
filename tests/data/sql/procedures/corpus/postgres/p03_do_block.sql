DO $$
DECLARE
    v_cutoff timestamptz := now() - interval '90 days';
BEGIN
    INSERT INTO archive.user_sessions (session_id, user_id, started_at, ended_at)
    SELECT s.session_id, s.user_id, s.started_at, s.ended_at
    FROM app.user_sessions s
    WHERE s.ended_at < v_cutoff;

    DELETE FROM app.user_sessions WHERE ended_at < v_cutoff;
END
$$;
