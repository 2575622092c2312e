{% macro create_raw_sources() %}
create schema if not exists raw;
create table if not exists raw.products as
  select * from (values
    ('P1', 'jaffle', 'food', 500),
    ('P2', 'coffee', 'drink', 300),
    ('P3', 'tea', 'drink', 250)
  ) as t(sku, product_name, category, price_cents);
create table if not exists raw.order_events as
  select * from (values
    (1, 1, 'placed', timestamp '2024-01-01 10:00:00'),
    (2, 1, 'shipped', timestamp '2024-01-02 09:00:00'),
    (3, 2, 'placed', timestamp '2024-01-03 11:30:00')
  ) as t(event_id, order_id, event_type, occurred_at);
{% endmacro %}
