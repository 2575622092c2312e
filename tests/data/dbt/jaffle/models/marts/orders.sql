{{ config(alias='fct_orders') }}

select
    o.order_id,
    o.customer_id,
    o.order_date,
    o.status,
    p.product_name,
    coalesce(op.credit_card_amount, 0) as credit_card_amount,
    coalesce(op.total_amount, 0) as amount
from {{ ref('stg_orders') }} as o
left join {{ ref('int_order_payments') }} as op on o.order_id = op.order_id
left join {{ ref('stg_products') }} as p on o.sku = p.sku
