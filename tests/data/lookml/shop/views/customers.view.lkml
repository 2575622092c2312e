view: customers {
  sql_table_name: @{marts}.customers ;;

  dimension: customer_id {
    primary_key: yes
    sql: ${TABLE}.customer_id ;;
  }

  dimension: full_name {
    sql: ${TABLE}.first_name || ' ' || ${TABLE}.last_name ;;
  }

  measure: lifetime_value {
    type: sum
    sql: ${TABLE}.lifetime_value ;;
  }
}
