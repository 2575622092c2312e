CREATE OR REPLACE PROCEDURE admin.rebuild_product_dim()
RETURNS VARCHAR
LANGUAGE SQL
AS
$$
BEGIN
  EXECUTE IMMEDIATE 'INSERT INTO dw.product_dim (product_id, product_name) SELECT id, name FROM raw.products';
  RETURN 'rebuilt';
END;
$$;
