CREATE OR REPLACE PROCEDURE etl.load_events()
RETURNS VARCHAR
LANGUAGE SQL
AS
$$
DECLARE
  bad_data EXCEPTION (-20002, 'bad event data');
BEGIN
  INSERT INTO core.events (event_id, user_id, event_type, event_ts)
    SELECT e.id, e.user_id, LOWER(e.type), TO_TIMESTAMP_NTZ(e.ts)
    FROM raw.events e
    WHERE e.type IS NOT NULL;
  IF ((SELECT COUNT(*) FROM core.events WHERE user_id IS NULL) > 0) THEN
    RAISE bad_data;
  END IF;
  RETURN 'ok';
EXCEPTION
  WHEN bad_data THEN
    INSERT INTO etl.errors (proc_name, message) VALUES ('load_events', 'null users; END');
    RETURN 'bad data';
  WHEN OTHER THEN
    INSERT INTO etl.errors (proc_name, message) VALUES ('load_events', :SQLERRM);
    RAISE;
END;
$$;
