{{ config(materialized='ephemeral') }}

select
    order_id,
    sum(case when payment_method = 'credit_card' then amount else 0 end) as credit_card_amount,
    sum(amount) as total_amount
from {{ ref('stg_payments') }}
group by order_id
