-- Spark
drop table T;
CREATE TABLE T (
  pk INT,
  v INT,
  pt INT)
TBLPROPERTIES (
    'primary-key' = 'pk',
    'bucket' = '-1',
    'dynamic-bucket.target-row-num'='2'
);
insert into T values (1, 10, 1);
