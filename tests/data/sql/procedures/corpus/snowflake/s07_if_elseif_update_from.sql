CREATE OR REPLACE PROCEDURE crm.apply_segments(mode VARCHAR)
RETURNS VARCHAR
LANGUAGE SQL
AS
$$
BEGIN
  IF (mode = 'FULL') THEN
    UPDATE crm.customers c
      SET segment = s.segment, segment_updated_at = CURRENT_TIMESTAMP()
      FROM scoring.segments s
      WHERE s.customer_id = c.customer_id;
  ELSEIF (mode = 'VIP') THEN
    UPDATE crm.customers c
      SET segment = 'VIP'
      FROM scoring.vip_list v
      WHERE v.customer_id = c.customer_id;
  ELSE
    RETURN 'unknown mode: ' || mode;
  END IF;
  RETURN 'ok';
END;
$$;
