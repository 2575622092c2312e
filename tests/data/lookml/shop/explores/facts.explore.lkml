explore: customer_facts {}
