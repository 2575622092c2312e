CREATE PROCEDURE hr.apply_raises(IN p_mode VARCHAR(10), IN p_pct DECIMAL(5,2))
BEGIN
    DECLARE i INT DEFAULT 0;

    IF p_mode = 'ALL' THEN
        UPDATE hr.salaries s
        JOIN hr.employees e ON e.id = s.employee_id
        SET s.amount = s.amount * (1 + p_pct / 100)
        WHERE e.active = 1;
    ELSEIF p_mode = 'GRADE' THEN
        UPDATE hr.salaries s
        JOIN hr.grade_raises g ON g.grade = s.grade
        SET s.amount = s.amount * (1 + g.pct / 100);
    ELSE
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'unknown mode; use ALL or GRADE';
    END IF;

    WHILE i < 3 DO
        SET i = i + 1;
    END WHILE;

    INSERT INTO hr.salary_history (employee_id, amount, changed_on)
    SELECT s.employee_id, s.amount, CURDATE() FROM hr.salaries s;
END
