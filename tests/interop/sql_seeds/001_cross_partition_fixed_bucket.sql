drop table T;
CREATE TABLE T (
  pk INT,
  v INT,
  pt INT)
partitioned by (pt)
TBLPROPERTIES (
  'primary-key' = 'pk',
  'bucket' = '2',
  'dynamic-bucket.target-row-num'='3'
);
insert into T values (1, 10, 1), (2, 20, 1), (3, 30, 1), (4, 40, 1);
delete from T where pk = 1;
insert into T values (1, 11, 2);
delete from T where pk = 1;
insert into T values (1, 12, 3);
-- update T set v = 12, pt = 3 where pk = 1; -- will duplicate of pk=1
select * from T order by pk;
