SET 'execution.runtime-mode' = 'batch';
    
CREATE TABLE with_pk_table (
    order_id BIGINT,
    price DECIMAL(32, 2),
    ts TIMESTAMP(3),
    PRIMARY KEY (order_id) NOT ENFORCED
);
insert into with_pk_table values (1, 100.0, CAST('2025-04-05 11:45:00' AS TIMESTAMP(3)));

insert into with_pk_table values (2, 200.0, CAST('2025-04-05 11:45:01' AS TIMESTAMP(3))), (3, 300.0, CAST('2025-04-05 11:45:02' AS TIMESTAMP(3)));

insert into with_pk_table values (4, 400.0, CAST('2025-04-05 11:45:03' AS TIMESTAMP(3))), (5, 500.0, CAST('2025-04-05 11:45:04' AS TIMESTAMP(3))), (6, 600.0, CAST('2025-04-05 11:45:05' AS TIMESTAMP(3))), (7, 700.0, CAST('2025-04-05 11:45:06' AS TIMESTAMP(3)));

delete from with_pk_table where order_id in (2, 3);

CALL sys.compact('ods.with_pk_table', '', '', '', '');
