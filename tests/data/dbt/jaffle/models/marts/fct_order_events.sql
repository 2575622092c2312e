{{ config(materialized='incremental', unique_key='event_id') }}

select
    e.event_id,
    e.order_id,
    e.event_type,
    e.occurred_at
from {{ source('shop', 'order_events') }} as e
{% if is_incremental() %}
where e.occurred_at > (select max(occurred_at) from {{ this }})
{% endif %}
