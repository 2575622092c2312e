-- dialect: oracle
INSERT INTO dw.emp_summary (dept_id, headcount, payroll) SELECT department_id, COUNT(*), SUM(salary) FROM hr.employees GROUP BY department_id;
INSERT ALL WHEN salary > 10000 THEN INTO dw.high_earners (emp_id, salary) VALUES (employee_id, salary) ELSE INTO dw.others (emp_id, salary) VALUES (employee_id, salary) SELECT employee_id, salary FROM hr.employees;
MERGE INTO dw.emp e USING (SELECT employee_id, salary FROM hr.employees) s ON (e.emp_id = s.employee_id) WHEN MATCHED THEN UPDATE SET e.salary = s.salary WHEN NOT MATCHED THEN INSERT (emp_id, salary) VALUES (s.employee_id, s.salary);
CREATE TABLE dw.emp_names AS SELECT employee_id, first_name || ' ' || last_name AS full_name, NVL(commission_pct, 0) AS comm FROM hr.employees;
INSERT INTO dw.hier SELECT employee_id, manager_id, LEVEL AS lvl FROM hr.employees START WITH manager_id IS NULL CONNECT BY PRIOR employee_id = manager_id;
INSERT INTO dw.decoded SELECT employee_id, DECODE(job_id, 'IT_PROG', 'dev', 'SA_REP', 'sales', 'other') AS role FROM hr.employees;
CREATE VIEW dw.v_dept AS SELECT d.department_name, e.last_name FROM hr.departments d JOIN hr.employees e ON e.department_id = d.department_id;
INSERT INTO dw.ranked SELECT employee_id, salary, DENSE_RANK() OVER (PARTITION BY department_id ORDER BY salary DESC) AS rnk FROM hr.employees;
INSERT INTO dw.listagg SELECT department_id, LISTAGG(last_name, ',') WITHIN GROUP (ORDER BY last_name) AS names FROM hr.employees GROUP BY department_id;
UPDATE dw.emp_summary s SET payroll = (SELECT SUM(salary) FROM hr.employees e WHERE e.department_id = s.dept_id);
CREATE MATERIALIZED VIEW dw.mv_dept BUILD IMMEDIATE REFRESH FAST ON COMMIT AS SELECT department_id, SUM(salary) AS payroll FROM hr.employees GROUP BY department_id;
