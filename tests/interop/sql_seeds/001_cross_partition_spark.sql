drop table T;
CREATE TABLE T (
  pk INT,
  v INT,
  pt INT)
partitioned by (pt)
TBLPROPERTIES (
  'primary-key' = 'pk',
  'bucket' = '-1',
  'dynamic-bucket.target-row-num'='2'
);
