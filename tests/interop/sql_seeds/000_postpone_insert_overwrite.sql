CREATE SCHEMA paimon.test_db;
CREATE TABLE paimon.test_db.t_postpone_ow (
                id INT NOT NULL, value INT,
                PRIMARY KEY (id)
            ) WITH ('bucket' = '-2');
INSERT INTO paimon.test_db.t_postpone_ow VALUES (1, 10), (2, 20);
INSERT OVERWRITE paimon.test_db.t_postpone_ow VALUES (3, 30);
