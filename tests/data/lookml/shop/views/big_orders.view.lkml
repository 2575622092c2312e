view: big_orders {
  derived_table: {
    sql:
      SELECT o.order_id, o.amount, c.first_name
      FROM ${orders.SQL_TABLE_NAME} AS o
      JOIN @{marts}.customers AS c ON c.customer_id = o.customer_id
      WHERE {% condition status_filter %} o.status {% endcondition %}
        AND c.region = '{{ _user_attributes['region'] }}'
      {% if big_orders.amount._is_filtered %} AND o.amount > 100 {% else %} AND o.amount > 0 {% endif %} ;;
  }

  filter: status_filter {
    type: string
  }

  dimension: order_id {
    sql: ${TABLE}.order_id ;;
  }

  dimension: first_name {
    sql: ${TABLE}.first_name ;;
  }

  measure: amount {
    type: sum
    sql: ${TABLE}.amount ;;
  }
}
