CREATE OR REPLACE PROCEDURE crm.sync_contact_emails()
LANGUAGE plpgsql
AS $$
BEGIN
    UPDATE crm.contacts c
       SET email = lower(s.email),
           phone = coalesce(s.phone, c.phone),
           updated_at = now()
      FROM staging.contact_updates s
     WHERE s.contact_id = c.contact_id
       AND s.email IS NOT NULL;

    INSERT INTO crm.contact_audit (contact_id, new_email, source_system)
    SELECT s.contact_id, s.email, s.source_system
    FROM staging.contact_updates s;
END;
$$;
