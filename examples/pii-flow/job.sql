-- Two statements: raw customers are staged, then a contact list is built from the stage.
INSERT INTO stage.customers SELECT id, email, country FROM raw.customers;
INSERT INTO mart.contacts SELECT id, lower(email) AS email FROM stage.customers WHERE country = 'NL';
