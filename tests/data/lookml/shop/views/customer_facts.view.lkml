view: customer_facts {
  derived_table: {
    explore_source: orders {
      column: customer_id { field: orders.customer_id }
      column: total_amount { field: orders.total_amount }
    }
  }

  dimension: customer_id {
    sql: ${TABLE}.customer_id ;;
  }

  measure: spend {
    type: sum
    sql: ${TABLE}.total_amount ;;
  }
}
