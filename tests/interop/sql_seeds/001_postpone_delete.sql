drop table T;
CREATE TABLE T (
  k INT,
  v INT,
  pt INT,
  PRIMARY KEY (k) NOT ENFORCED
) PARTITIONED BY (pt) WITH (
  'bucket' = '-2',
  'postpone.default-bucket-num' = '2',
  'merge-engine' = 'deduplicate',
  'postpone.batch-write-fixed-bucket' = 'false'
);
INSERT INTO T VALUES (1, 10, 1), (2, 20, 1), (3, 30, 1), (4, 40, 1);
delete from T where k = 1;  -- 不会起作用，因为 k=1 还在 Postpone Bucket 中， 需要在 compact 后才会生效
INSERT INTO T VALUES (1, 11, 2);
call sys.compact(`table` => 'default.T');
