{% snapshot customers_snapshot %}
{{ config(target_schema='snapshots', unique_key='customer_id', strategy='check', check_cols=['email']) }}

select customer_id, first_name, last_name, email from {{ ref('stg_customers') }}

{% endsnapshot %}
