-- The test database of tests/database/: tables, views on views, a SELECT * view, a materialized
-- view, PL/pgSQL and SQL functions and procedures. Run by psycopg as one script.
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE SCHEMA sales;
CREATE SCHEMA mart;

CREATE TABLE sales.customers (id integer PRIMARY KEY, name text NOT NULL, country char(2), created_at timestamptz);
CREATE TABLE sales.orders (id bigint PRIMARY KEY, customer_id integer REFERENCES sales.customers (id),
                           amount numeric(12, 2), status varchar(20), ordered_at date);
CREATE TABLE mart.daily_revenue (day date PRIMARY KEY, revenue numeric(14, 2), orders integer);
CREATE TABLE mart.customer_totals (customer_id integer, total numeric(14, 2));
CREATE TABLE mart.refresh_log (refreshed_at timestamptz, rows_loaded integer);
CREATE TABLE public.events (id integer, kind text, payload jsonb);

-- a SELECT * view (Postgres stores it with its columns expanded)
CREATE VIEW sales.all_orders AS SELECT * FROM sales.orders;
-- a view on a view, with a join and an aggregate
CREATE VIEW sales.paid_orders AS
    SELECT o.id, o.customer_id, o.amount, o.ordered_at FROM sales.all_orders o WHERE o.status = 'paid';
CREATE VIEW mart.customer_revenue AS
    SELECT c.id AS customer_id, c.name, sum(p.amount) AS revenue
    FROM sales.customers c JOIN sales.paid_orders p ON p.customer_id = c.id
    GROUP BY c.id, c.name;
-- a view on a view on a view
CREATE VIEW mart.top_customers AS SELECT customer_id, upper(name) AS name FROM mart.customer_revenue WHERE revenue > 100;
CREATE MATERIALIZED VIEW mart.country_orders AS
    SELECT c.country, count(*) AS orders FROM sales.orders o JOIN sales.customers c ON c.id = o.customer_id GROUP BY c.country;
CREATE VIEW public.recent_events AS SELECT id, kind FROM events WHERE id > 10;

CREATE PROCEDURE mart.refresh_daily(p_since date)
LANGUAGE plpgsql AS $$
DECLARE
    v_rows integer := 0;
BEGIN
    CREATE TEMP TABLE recent AS SELECT ordered_at, amount FROM sales.orders WHERE ordered_at >= p_since;
    INSERT INTO mart.daily_revenue (day, revenue, orders)
        SELECT ordered_at, sum(amount), count(*) FROM recent GROUP BY ordered_at;
    GET DIAGNOSTICS v_rows = ROW_COUNT;
    IF v_rows > 0 THEN
        INSERT INTO mart.refresh_log (refreshed_at, rows_loaded) VALUES (now(), v_rows);
    END IF;
    DROP TABLE recent;
END;
$$;

CREATE FUNCTION mart.load_customer_totals() RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    n integer;
BEGIN
    DELETE FROM mart.customer_totals;
    INSERT INTO mart.customer_totals (customer_id, total)
        SELECT customer_id, sum(amount) FROM sales.orders GROUP BY customer_id;
    GET DIAGNOSTICS n = ROW_COUNT;
    EXECUTE format('ANALYZE %I.%I', 'mart', 'customer_totals');
    RETURN n;
END;
$$;

CREATE FUNCTION mart.order_count(c integer) RETURNS bigint LANGUAGE sql STABLE
AS 'SELECT count(*) FROM sales.orders WHERE customer_id = c';
