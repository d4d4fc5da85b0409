CREATE TABLE T (
  pk INT,
  v INT,
  pt INT,
  primary key (pk, pt) not enforced
)
partitioned by (pt)
with (
  'bucket' = '-1',
  'dynamic-bucket.target-row-num'='2'
);
    
insert into T values (1, 10, 1), (2, 20, 1), (3, 30, 1), (4, 40, 1);
insert into T values (1, 11, 2);
select * from T;
