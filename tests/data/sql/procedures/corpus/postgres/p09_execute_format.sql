CREATE OR REPLACE FUNCTION part.create_month_partition(p_month date)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_name text := 'events_' || to_char(p_month, 'YYYYMM');
BEGIN
    EXECUTE format('CREATE TABLE IF NOT EXISTS part.%I PARTITION OF part.events FOR VALUES FROM (%L) TO (%L)',
                   v_name, p_month, p_month + interval '1 month');
    INSERT INTO part.partition_log (partition_name, created_at) VALUES (v_name, now());
    INSERT INTO part.partition_stats (partition_name, source_rows)
    SELECT v_name, count(*) FROM part.events_staging WHERE event_month = p_month;
END;
$$;
