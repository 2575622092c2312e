connection: "warehouse"
include: "/views/*.view.lkml"

explore: orders {
  label: "Orders"
  join: customers {
    type: left_outer
    relationship: many_to_one
    sql_on: ${orders.customer_id} = ${customers.customer_id} ;;
  }
}

explore: big_orders {}

explore: customer_facts {}
