{{ config(materialized='view') }}

select * from {{ ref('orders') }}
where status <> 'returned'
