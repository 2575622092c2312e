CREATE PROCEDURE `mkt`.`load_campaign_events`()
BEGIN
    INSERT INTO `mkt`.`campaign_events` (`event_id`, `campaign`, `event_type`, `note`)
    SELECT e.`id`, e.`campaign_name`, e.`type`, CONCAT('it''s a "quote"; BEGIN ', e.`type`, ' END')
    FROM `raw`.`tracking_events` AS e
    WHERE e.`type` IN ('UPDATE', 'INSERT', 'DELETE') AND e.`source` <> 'SELECT';
END
