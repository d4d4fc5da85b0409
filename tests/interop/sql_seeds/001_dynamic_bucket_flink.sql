-- Flink
create table T (
    pk int, 
    v int, 
    pt int, 
    primary key (pk) not enforced
);
insert into T values (1, 1, 1);
