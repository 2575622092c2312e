CREATE DEFINER=`etl`@`%` PROCEDURE `reporting`.`rebuild_city_stats`()
BEGIN
    DECLARE done INT DEFAULT FALSE;
    DECLARE v_city VARCHAR(100);
    DECLARE cur CURSOR FOR SELECT DISTINCT city FROM crm.customers WHERE city IS NOT NULL;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET done = TRUE;

    OPEN cur;
    read_loop: LOOP
        FETCH cur INTO v_city;
        IF done THEN
            LEAVE read_loop;
        END IF;
        UPDATE reporting.city_flags SET refreshed = 1 WHERE city = v_city;
    END LOOP;
    CLOSE cur;

    INSERT INTO reporting.city_stats (city, customers, avg_age)
    SELECT c.city, COUNT(*), AVG(c.age)
    FROM crm.customers c
    GROUP BY c.city;
END
