"""Write-audit-publish on a branch through Spark (issue 41, item 3), and a table that reads two
branches read through Spark (item 4), with Java Paimon 1.4.2 reading the same at every step.

A Spark job writes into ``db.t$branch_audit``; a check reads the branch and main, which differ;
``CALL sys.fast_forward`` publishes the branch to main. Java reads main and the branch as we do
before and after.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from branch_read_oracle import java_read
from java_oracle import JavaOracle, sorted_rows
from pyspark.sql import SparkSession

from paimon_pyspark.spark import read, register, sql, write

pytestmark = [pytest.mark.java, pytest.mark.slow]


@pytest.fixture(scope="module")
def wh(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = str(tmp_path_factory.mktemp("wap"))
    register(spark, warehouse=path)
    sql(spark, "CREATE DATABASE wap").collect()
    yield path
    sql(spark, "USE default").collect()


def spark_rows(spark: SparkSession, statement: str) -> list[list[Any]]:
    return sorted_rows([list(r) for r in sql(spark, statement).collect()])


def test_write_audit_publish(spark: SparkSession, java_oracle: JavaOracle, wh: str) -> None:
    sql(
        spark,
        "CREATE TABLE wap.t (dt STRING, k BIGINT, v STRING, PRIMARY KEY (dt, k) NOT ENFORCED) "
        "PARTITIONED BY (dt) WITH ('bucket' = '2')",
    ).collect()
    sql(spark, "INSERT INTO wap.t VALUES ('1', 1, 'a'), ('1', 2, 'b')").collect()
    sql(spark, "CALL sys.create_branch('wap.t', 'audit')").collect()
    # the job writes into the branch only
    df = spark.createDataFrame([("1", 2, "b2"), ("2", 3, "c")], "dt STRING, k BIGINT, v STRING")
    write(df, wh, "wap.t$branch_audit")
    sql(spark, "INSERT INTO wap.`t$branch_audit` VALUES ('2', 4, 'd')").collect()
    main = [["1", 1, "a"], ["1", 2, "b"]]
    audit = [["2", 3, "c"], ["2", 4, "d"], ["1", 2, "b2"]]
    # the audit: the branch and main differ, as Java reads them too
    assert spark_rows(spark, "SELECT * FROM wap.t") == main
    assert spark_rows(spark, "SELECT * FROM wap.`t$branch_audit`") == sorted_rows(audit)
    branch_df = read(spark, wh, "wap.t$branch_audit", where="dt = '2'")
    assert sorted_rows([list(r) for r in branch_df.collect()]) == [["2", 3, "c"], ["2", 4, "d"]]
    assert java_read(java_oracle, wh, "wap", "t") == main
    assert java_read(java_oracle, wh, "wap", "t$branch_audit") == sorted_rows(audit)
    # publish: main becomes the branch
    sql(spark, "CALL sys.fast_forward('wap.t', 'audit')").collect()
    assert spark_rows(spark, "SELECT * FROM wap.t") == sorted_rows(audit)
    assert java_read(java_oracle, wh, "wap", "t") == sorted_rows(audit)
    assert java_read(java_oracle, wh, "wap", "t$branch_audit") == sorted_rows(audit)
    # main goes on from the published state, in Java's eyes as in ours
    sql(spark, "INSERT INTO wap.t VALUES ('3', 5, 'e')").collect()
    assert java_read(java_oracle, wh, "wap", "t") == spark_rows(spark, "SELECT * FROM wap.t")


def test_spark_reads_a_fallback_table_as_java_does(
    spark: SparkSession, java_oracle: JavaOracle, wh: str
) -> None:
    sql(
        spark,
        "CREATE TABLE wap.f (dt STRING, k BIGINT, v STRING) PARTITIONED BY (dt) "
        "WITH ('bucket' = '1', 'bucket-key' = 'k')",
    ).collect()
    sql(spark, "INSERT INTO wap.f VALUES ('1', 1, 'main1')").collect()
    sql(spark, "CALL sys.create_branch('wap.f', 'b')").collect()
    sql(spark, "INSERT INTO wap.`f$branch_b` VALUES ('1', 9, 'b9'), ('2', 3, 'b3')").collect()
    sql(spark, "ALTER TABLE wap.f SET TBLPROPERTIES ('scan.fallback-branch' = 'b')").collect()
    expected = [["1", 1, "main1"], ["2", 3, "b3"]]
    assert java_read(java_oracle, wh, "wap", "f") == expected
    assert spark_rows(spark, "SELECT * FROM wap.f") == expected
    assert spark_rows(spark, "SELECT k, v FROM wap.f WHERE dt = '2'") == [[3, "b3"]]
    frame = spark.read.format("paimon").option("warehouse", wh).option("table", "wap.f").load()
    assert sorted_rows([list(r) for r in frame.collect()]) == expected
    assert sorted_rows([list(r) for r in read(spark, wh, "wap.f").collect()]) == expected
    # a job that writes main leaves the fallback partition alone: dt=2 now comes from main
    sql(spark, "INSERT INTO wap.f VALUES ('2', 7, 'main7')").collect()
    expected = [["1", 1, "main1"], ["2", 7, "main7"]]
    assert java_read(java_oracle, wh, "wap", "f") == expected
    assert spark_rows(spark, "SELECT * FROM wap.f") == expected
