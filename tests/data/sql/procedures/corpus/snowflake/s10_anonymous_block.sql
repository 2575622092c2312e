EXECUTE IMMEDIATE $$
DECLARE
  cutoff DATE DEFAULT DATEADD(day, -30, CURRENT_DATE());
BEGIN
  INSERT INTO analytics.recent_signups (user_id, email, signup_date)
    SELECT u.id, u.email, u.created_at::DATE
    FROM raw.users u
    WHERE u.created_at >= :cutoff;
  RETURN 'ok';
END;
$$;
