CREATE OR REPLACE PROCEDURE ops.purge_and_copy_sessions()
RETURNS VARCHAR
LANGUAGE SQL
AS
$$
DECLARE
  i INTEGER DEFAULT 0;
  note VARCHAR DEFAULT 'BEGIN; END; -- not a comment';
BEGIN
  WHILE (i < 3) DO
    i := i + 1;
  END WHILE;
  INSERT INTO ops.session_archive (session_id, user_id, started_at, note)
    SELECT s.session_id, s.user_id, s.started_at, 'copied; it''s DELETE-safe'
    FROM ops.sessions s
    WHERE s.kind = 'DELETE' OR s.kind = 'END';
  RETURN note;
END;
$$;
