CREATE OR REPLACE FUNCTION content.publish_articles()
RETURNS integer
LANGUAGE plpgsql
AS $body$
DECLARE
    n integer;
BEGIN
    INSERT INTO content.published ("Article Id", title, teaser)
    SELECT a."Id", a.title, left(a.body, 200) || ' ... it''s $$ and ; and END'
    FROM content.drafts a
    WHERE a.status = 'ready; BEGIN';
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END;
$body$;
