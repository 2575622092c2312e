- dashboard: overview
  title: Shop overview
  layout: newspaper
  elements:
  - name: amount_by_month
    title: Amount by month
    model: shop
    explore: orders
    type: looker_line
    fields: [orders.ordered_month, orders.total_amount]
  - name: top_customers
    title: Top customers
    model: shop
    explore: orders
    type: looker_grid
    fields: [customers.full_name, customers.lifetime_value]
  - name: note
    type: text
    title_text: Read me
  - name: lost
    title: Lost element
    model: shop
    explore: no_such_explore
    type: looker_grid
    fields: [x.y]
