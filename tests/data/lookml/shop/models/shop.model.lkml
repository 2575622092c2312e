connection: "warehouse"
include: "/views/*.view.lkml"
include: "/explores/*.explore.lkml"

explore: orders {
  label: "Orders"
  join: customers {
    type: left_outer
    relationship: many_to_one
    sql_on: ${orders.customer_id} = ${customers.customer_id} ;;
  }
}

explore: big_orders {}
