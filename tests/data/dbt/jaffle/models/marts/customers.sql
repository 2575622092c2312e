with orders as (
    select * from {{ ref('orders') }}
),

customer_orders as (
    select
        customer_id,
        min(order_date) as first_order,
        count(order_id) as number_of_orders,
        sum(amount) as lifetime_value
    from orders
    group by customer_id
)

select
    c.customer_id,
    c.first_name,
    c.last_name,
    co.first_order,
    coalesce(co.number_of_orders, 0) as number_of_orders,
    co.lifetime_value
from {{ ref('stg_customers') }} as c
left join customer_orders as co on c.customer_id = co.customer_id
