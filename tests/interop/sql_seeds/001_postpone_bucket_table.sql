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
CALL sys.compact(`table` => 'ods.postpone_bucket_table', compact_strategy => 'full');

-- after compact, see all order_id
    
CALL sys.rescale(
  `table` => 'ods.postpone_bucket_table',
  `bucket_num` => 1,
  `partition` => 'order_date=2023-10-02'
);

-- after rescale, 2023-10-02 merge two files

insert into postpone_bucket_table /*+ OPTIONS('postpone.batch-write-fixed-bucket' = 'true') */ values (7, 1006, '2023-10-03', 500.00, 'COMPLETED');
insert into postpone_bucket_table values (8, 1007, '2023-10-03', 600.00, 'COMPLETED');
insert into postpone_bucket_table values (9, 1008, '2023-10-03', 700.00, 'COMPLETED');
insert into postpone_bucket_table /*+ OPTIONS('postpone.batch-write-fixed-bucket' = 'true') */ values (10, 1009, '2023-10-03', 800.00, 'COMPLETED');
