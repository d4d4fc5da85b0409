-- One table's life, written for Java's Paimon Spark connector (spark-sql with the catalog
-- `paimon` = org.apache.paimon.spark.SparkCatalog and Paimon's session extensions), and run
-- unchanged by `make demo`:
--   paimon-pyspark sql --warehouse demo-warehouse --echo -f examples/sql/java_connector_table_life.sql
-- A SELECT follows each step, to show what a reader sees. (Checked against the connector 0.9.0 on
-- Spark 3.5, which gives the same rows; it predates `ALTER TABLE ... CREATE TAG` and `SHOW TAGS`,
-- Spark DDL of Paimon 1.x: docs/content/spark/sql-ddl.md.)

CREATE DATABASE IF NOT EXISTS paimon.shop;
USE paimon.shop;
DROP TABLE IF EXISTS orders;

CREATE TABLE orders (
  order_id BIGINT,
  customer STRING,
  amount DECIMAL(10, 2),
  status STRING,
  dt STRING
) USING paimon
PARTITIONED BY (dt)
TBLPROPERTIES ('primary-key' = 'dt,order_id', 'bucket' = '2', 'file.format' = 'parquet');

-- snapshot 1
INSERT INTO orders VALUES
  (1, 'alice', 10.50, 'NEW', '2024-01-01'),
  (2, 'bob', 20.00, 'NEW', '2024-01-01'),
  (3, 'carol', 30.25, 'NEW', '2024-01-02');
SELECT * FROM orders ORDER BY order_id;

-- tag snapshot 1, once by procedure (Spark's named arguments) and once by DDL
CALL sys.create_tag(table => 'shop.orders', tag => 'first_load', snapshot => 1);
ALTER TABLE orders CREATE TAG day_one AS OF VERSION 1;
SHOW TAGS orders;

-- snapshot 2
INSERT INTO orders VALUES (4, 'dave', 40.00, 'NEW', '2024-01-02');
SELECT * FROM orders ORDER BY order_id;

-- snapshot 3: apply a batch of changes (U: update, D: delete, I: insert)
MERGE INTO orders AS t
USING (
  SELECT * FROM VALUES
    (1, 'alice', 12.00, 'PAID', '2024-01-01', 'U'),
    (2, 'bob', 20.00, 'NEW', '2024-01-01', 'D'),
    (5, 'erin', 50.00, 'NEW', '2024-01-02', 'I')
    AS changes(order_id, customer, amount, status, dt, op)
) AS s
ON t.order_id = s.order_id AND t.dt = s.dt
WHEN MATCHED AND s.op = 'D' THEN DELETE
WHEN MATCHED THEN UPDATE SET amount = s.amount, status = s.status
WHEN NOT MATCHED AND s.op <> 'D' THEN
  INSERT (order_id, customer, amount, status, dt)
  VALUES (s.order_id, s.customer, s.amount, s.status, s.dt);
SELECT * FROM orders ORDER BY order_id;

DESCRIBE orders;
SHOW PARTITIONS orders;

-- time travel: by snapshot id, by tag, by timestamp (any time after the last commit)
SELECT * FROM orders VERSION AS OF 2 ORDER BY order_id;
SELECT * FROM orders VERSION AS OF 'first_load' ORDER BY order_id;
SELECT count(*) FROM orders TIMESTAMP AS OF '2999-01-01 00:00:00';

-- snapshot 4 empties the table; the tags keep the history
TRUNCATE TABLE orders;
SELECT count(*) FROM orders;
SELECT * FROM orders VERSION AS OF 'day_one' ORDER BY order_id;
