-- Oracle PL/SQL (Oracle docs: CREATE PROCEDURE, declarations after IS, cursors, EXECUTE IMMEDIATE,
-- SELECT INTO variables, END name; and the SQL*Plus "/" line).
CREATE OR REPLACE PROCEDURE hr.raise_salaries (p_pct IN NUMBER) IS
  v_count NUMBER;
  v_table VARCHAR2(30) := 'HR.SALARY_TMP';
  CURSOR c_emps IS SELECT employee_id FROM hr.employees WHERE department_id = 10;
BEGIN
  UPDATE hr.employees SET salary = salary * (1 + p_pct / 100) WHERE department_id = 10;
  INSERT INTO hr.salary_log (employee_id, new_salary)
    SELECT employee_id, salary FROM hr.employees WHERE department_id = 10;
  SELECT COUNT(*) INTO v_count FROM hr.salary_log;
  EXECUTE IMMEDIATE 'TRUNCATE TABLE ' || v_table;
EXCEPTION
  WHEN NO_DATA_FOUND THEN
    NULL;
END raise_salaries;
/
