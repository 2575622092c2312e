DELIMITER //
DROP PROCEDURE IF EXISTS crm.merge_leads//
CREATE PROCEDURE crm.merge_leads()
BEGIN
    INSERT INTO crm.contacts (email, full_name, source)
    SELECT l.email, CONCAT(l.first_name, ' ', l.last_name), 'lead'
    FROM crm.leads l
    LEFT JOIN crm.contacts c ON c.email = l.email
    WHERE c.email IS NULL;
END//
DELIMITER ;
