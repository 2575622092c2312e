select
    sku,
    product_name,
    category,
    price_cents / 100.0 as price
from {{ source('shop', 'products') }}
