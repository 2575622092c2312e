CREATE OR REPLACE PROCEDURE ops.move_finished_jobs()
LANGUAGE plpgsql
AS $$
BEGIN
    WITH moved AS (
        DELETE FROM ops.jobs j
        WHERE j.finished_at < now() - interval '7 days'
        RETURNING j.job_id, j.kind, j.finished_at
    )
    INSERT INTO ops.jobs_history (job_id, kind, finished_at)
    SELECT m.job_id, m.kind, m.finished_at FROM moved m;
END;
$$;
