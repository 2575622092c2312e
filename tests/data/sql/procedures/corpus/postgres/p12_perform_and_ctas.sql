CREATE OR REPLACE FUNCTION reporting.build_cohorts(p_year int)
RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(42);
    DROP TABLE IF EXISTS reporting.cohorts;
    CREATE TABLE reporting.cohorts AS
    SELECT u.user_id, date_trunc('month', u.signup_at) AS cohort_month, c.country_name
    FROM app.users u
    LEFT JOIN ref.countries c ON c.code = u.country_code
    WHERE extract(year FROM u.signup_at) = p_year;
    PERFORM 1 FROM reporting.cohorts LIMIT 1;
END;
$$;
