select
    id as customer_id,
    first_name,
    last_name,
    lower(email) as email
from {{ ref('raw_customers') }}
