-- dialect: mysql
INSERT INTO report.daily_sales (day, store_id, total) SELECT DATE(created_at), store_id, SUM(amount) FROM shop.sales GROUP BY DATE(created_at), store_id;
UPDATE shop.products p JOIN shop.stock s ON s.product_id = p.id SET p.in_stock = s.qty > 0 WHERE s.warehouse = 'main';
INSERT INTO report.customer_orders SELECT c.id, c.email, COUNT(o.id) AS orders FROM shop.customers c LEFT JOIN shop.orders o ON o.customer_id = c.id GROUP BY c.id, c.email;
CREATE TABLE report.big_spenders AS SELECT customer_id, SUM(amount) AS spent FROM shop.orders GROUP BY customer_id HAVING SUM(amount) > 1000;
INSERT INTO report.concat_names SELECT id, CONCAT_WS(' ', first_name, last_name) AS full_name, IFNULL(phone, 'n/a') AS phone FROM shop.customers;
INSERT INTO report.group_concat SELECT order_id, GROUP_CONCAT(sku ORDER BY sku SEPARATOR ',') AS skus FROM shop.order_items GROUP BY order_id;
INSERT INTO report.upserted (id, total) SELECT customer_id, SUM(amount) FROM shop.orders GROUP BY customer_id ON DUPLICATE KEY UPDATE total = VALUES(total);
REPLACE INTO report.replaced (id, name) SELECT id, name FROM shop.customers;
INSERT INTO report.values_only (id, name) VALUES (1, 'a'), (2, 'b');
INSERT INTO report.case_json SELECT id, JSON_UNQUOTE(JSON_EXTRACT(attrs, '$.color')) AS color, CASE WHEN price > 100 THEN 'hi' ELSE 'lo' END AS tier FROM shop.products;
CREATE VIEW report.v_orders AS SELECT o.id, o.amount, c.email FROM shop.orders o JOIN shop.customers c ON c.id = o.customer_id WHERE o.status = 'paid';
INSERT INTO report.ranked SELECT id, amount, RANK() OVER (ORDER BY amount DESC) AS rk FROM shop.orders;
CREATE TABLE report.orders_copy LIKE shop.orders;
