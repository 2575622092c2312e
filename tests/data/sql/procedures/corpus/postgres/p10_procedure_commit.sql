CREATE OR REPLACE PROCEDURE dw.load_fact_shipments()
LANGUAGE plpgsql
AS $$
DECLARE
    v_batch int;
BEGIN
    FOR v_batch IN 1..10 LOOP
        INSERT INTO dw.fact_shipments (shipment_id, carrier_key, shipped_on, weight_kg)
        SELECT s.shipment_id, c.carrier_key, s.shipped_on, s.weight_g / 1000.0
        FROM staging.shipments s
        JOIN dw.dim_carrier c ON c.carrier_code = s.carrier_code
        WHERE s.batch_no = v_batch;
        COMMIT;
    END LOOP;
END;
$$;
