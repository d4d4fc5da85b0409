CREATE TABLE wo_pk_table (
    order_id BIGINT,
    price DECIMAL(32, 2),
    ts TIMESTAMP(3)
) WITH (
    'bucket' = '2',
    'bucket-key' = 'order_id'
);

insert into wo_pk_table values (1, 100.0, CAST('2025-04-05 11:45:00' AS TIMESTAMP(3)));
insert into wo_pk_table values (2, 200.0, CAST('2025-04-05 11:45:01' AS TIMESTAMP(3))), (3, 300.0, CAST('2025-04-05 11:45:02' AS TIMESTAMP(3)));
