CREATE SCHEMA paimon.test_db;
CREATE TABLE paimon.test_db.t_postpone (
                id INT NOT NULL, value INT,
                PRIMARY KEY (id)
            ) WITH ('bucket' = '-2');
INSERT INTO paimon.test_db.t_postpone VALUES (1, 10), (2, 20), (3, 30);
SELECT * FROM paimon.test_db.t_postpone;
