-- The seed's postpone bucket example (bucket = -2), run by `make demo`:
--   paimon-pyspark sql --warehouse demo-warehouse --echo -f examples/sql/postpone_bucket_table.sql
-- The seed's statements and comments are as the seed has them; the lines marked "added:" and
-- the SELECTs are not in the seed, they show what a reader sees after each step.

CREATE DATABASE IF NOT EXISTS ods;
USE ods;
-- added: so that the script can run again on the same warehouse
DROP TABLE IF EXISTS postpone_bucket_table;

SET 'execution.runtime-mode' = 'batch';
CREATE TABLE postpone_bucket_table (
  order_id INT,
  customer_id INT,
  order_date STRING,
  total_amount DECIMAL(10, 2),
  status STRING,
  PRIMARY KEY (order_date, order_id) NOT ENFORCED
) PARTITIONED BY (order_date) WITH (
  'bucket' = '-2',
  'postpone.batch-write-fixed-bucket' = 'false',
  'postpone.default-bucket-num' = '2',
  'file.format' = 'parquet'
);

-- Whether to write the data into fixed bucket for batch writing a postpone bucket table.
-- postpone.default-bucket-num:1

INSERT INTO postpone_bucket_table VALUES 
  (1, 1001, '2023-10-01', 100.50, 'COMPLETED'),
  (2, 1002, '2023-10-01', 200.75, 'PENDING'),
  (3, 1001, '2023-10-02', 150.20, 'COMPLETED');

-- 使用OPTIONS子句设置写入参数
INSERT INTO postpone_bucket_table /*+ OPTIONS('postpone.batch-write-fixed-bucket' = 'true') */ VALUES 
  (4, 1003, '2023-10-02', 300.00, 'COMPLETED');

-- 使用并行度写入
INSERT INTO postpone_bucket_table /*+ OPTIONS('postpone.batch-write-fixed-bucket' = 'true') */ VALUES 
  (5, 1004, '2023-10-03', 450.80, 'PENDING'),
  (6, 1005, '2023-10-03', 220.30, 'COMPLETED');


-- currently only see order_id=4, because of bucket-postpone directory of each partition and are not available to readers.
-- added: 1-3 wait in bucket-postpone; 4, 5 and 6 were written with the fixed-bucket hint, so
-- they are in real buckets (a new partition gets postpone.default-bucket-num = 2) and visible.
SELECT * FROM postpone_bucket_table ORDER BY order_id;

CALL sys.compact(`table` => 'ods.postpone_bucket_table', compact_strategy => 'full');

-- after compact, see all order_id
SELECT * FROM postpone_bucket_table ORDER BY order_id;
    
CALL sys.rescale(
  `table` => 'ods.postpone_bucket_table',
  `bucket_num` => 1,
  `partition` => 'order_date=2023-10-02'
);

-- after rescale, 2023-10-02 merge two files
SELECT * FROM postpone_bucket_table ORDER BY order_id;

insert into postpone_bucket_table /*+ OPTIONS('postpone.batch-write-fixed-bucket' = 'true') */ values (7, 1006, '2023-10-03', 500.00, 'COMPLETED');
insert into postpone_bucket_table values (8, 1007, '2023-10-03', 600.00, 'COMPLETED');
insert into postpone_bucket_table values (9, 1008, '2023-10-03', 700.00, 'COMPLETED');
insert into postpone_bucket_table /*+ OPTIONS('postpone.batch-write-fixed-bucket' = 'true') */ values (10, 1009, '2023-10-03', 800.00, 'COMPLETED');

-- added: 7 and 10 are visible at once, 8 and 9 wait in bucket-postpone until a compaction
SELECT * FROM postpone_bucket_table ORDER BY order_id;
CALL sys.compact(`table` => 'ods.postpone_bucket_table', compact_strategy => 'full');
SELECT * FROM postpone_bucket_table ORDER BY order_id;
-- added: time travel to snapshot 2 (the insert of order_id=4), when 1-3 were still postponed
SELECT * FROM postpone_bucket_table VERSION AS OF 2 ORDER BY order_id;
