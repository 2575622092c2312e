-- The database reader's MySQL-protocol test database (MariaDB; run in a fresh database, names
-- unqualified): views on views, a SELECT * view, stored procedures (one with dynamic SQL), a function.
CREATE TABLE customers (
  id INT NOT NULL PRIMARY KEY,
  name VARCHAR(100) NOT NULL,
  country CHAR(2)
);
CREATE TABLE orders (
  id BIGINT NOT NULL PRIMARY KEY,
  customer_id INT NOT NULL,
  amount DECIMAL(12,2) NOT NULL,
  status VARCHAR(20) NOT NULL,
  ordered_at DATE NOT NULL
);
CREATE TABLE daily_revenue (day DATE, revenue DECIMAL(14,2), orders INT);
CREATE TABLE customer_totals (customer_id INT, total DECIMAL(14,2));
CREATE TABLE refresh_log (loaded_at DATETIME, rows_loaded INT);

-- SELECT *: the server expands it to the table's columns when the view is created
CREATE VIEW all_orders AS SELECT * FROM orders;
-- a view on a view
CREATE VIEW paid_orders AS
  SELECT id, customer_id, amount, ordered_at FROM all_orders WHERE status = 'paid';
CREATE VIEW customer_revenue AS
  SELECT c.id AS customer_id, c.name, SUM(p.amount) AS revenue
  FROM customers c JOIN paid_orders p ON p.customer_id = c.id
  GROUP BY c.id, c.name;
CREATE VIEW top_customers AS
  SELECT customer_id, UPPER(name) AS name FROM customer_revenue WHERE revenue > 100;

CREATE PROCEDURE refresh_daily(IN p_since DATE)
BEGIN
  DECLARE v_rows INT DEFAULT 0;
  CREATE TEMPORARY TABLE recent AS
    SELECT ordered_at, amount FROM orders WHERE status = 'paid' AND ordered_at >= p_since;
  DELETE FROM daily_revenue WHERE day >= p_since;
  IF p_since IS NOT NULL THEN
    INSERT INTO daily_revenue (day, revenue, orders)
      SELECT ordered_at, SUM(amount), COUNT(*) FROM recent GROUP BY ordered_at;
  END IF;
  SELECT COUNT(*) INTO v_rows FROM recent;
  INSERT INTO refresh_log (loaded_at, rows_loaded) VALUES (NOW(), v_rows);
  DROP TEMPORARY TABLE recent;
END;

CREATE PROCEDURE load_customer_totals()
BEGIN
  DELETE FROM customer_totals;
  INSERT INTO customer_totals (customer_id, total)
    SELECT customer_id, SUM(amount) FROM orders GROUP BY customer_id;
  SET @sql = CONCAT('INSERT INTO refresh_log (rows_loaded) SELECT COUNT(*) FROM ', 'customer_totals');
  PREPARE stmt FROM @sql;
  EXECUTE stmt;
  DEALLOCATE PREPARE stmt;
END;

-- only reads: no process
CREATE FUNCTION order_count(p_customer INT) RETURNS INT READS SQL DATA
  RETURN (SELECT COUNT(*) FROM orders WHERE customer_id = p_customer);
