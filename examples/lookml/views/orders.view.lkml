view: orders {
  sql_table_name: @{marts}.fct_orders ;;

  dimension: order_id {
    primary_key: yes
    type: number
    sql: ${TABLE}.order_id ;;
  }

  dimension: customer_id {
    type: number
    sql: ${TABLE}.customer_id ;;
  }

  dimension: status {}

  dimension_group: ordered {
    type: time
    timeframes: [date, month]
    sql: ${TABLE}.order_date ;;
  }

  dimension: card_share {
    type: number
    sql: ${TABLE}.credit_card_amount / NULLIF(${amount_value}, 0) ;;
  }

  dimension: amount_value {
    hidden: yes
    sql: ${TABLE}.amount ;;
  }

  measure: total_amount {
    type: sum
    sql: ${amount_value} ;;
  }

  measure: count {
    type: count
  }
}
