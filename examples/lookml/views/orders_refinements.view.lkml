# A refinement: adds a field to the orders view
view: +orders {
  dimension: is_big {
    type: yesno
    sql: ${TABLE}.amount > 100 ;;
  }
}
