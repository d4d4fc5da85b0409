# Two entry points for a fresh machine: `make demo` and `make test`.
# Every download (PyPI packages, Maven jars) happens here, cached in ignored folders.

PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
PYPAIMON_VENV := .venv-pypaimon
SPARK35_VENV := .venv-spark35
# deltalake and pyiceberg, the core engine's peers in bench/core_vs_lakes.py (make bench only).
LAKES_VENV := .venv-lakes
PAIMON_JAVA_VERSION := 1.4.2
JAVA_DIR := .cache/java
PAIMON_JAR := $(JAVA_DIR)/paimon-bundle-$(PAIMON_JAVA_VERSION).jar
# Java Paimon's S3 file IO plugin (Hadoop S3A inside), beside the bundle on the oracle's classpath.
PAIMON_S3_JAR := $(JAVA_DIR)/paimon-s3-$(PAIMON_JAVA_VERSION).jar
# The Java Paimon Spark connector, a benchmark baseline and the MERGE INTO oracle of
# tests/interop/test_merge_into_java.py: the only one on Maven Central here is for Spark 3.5
# (Paimon 0.9.0), so it runs on pyspark 3.5 in its own venv.
PAIMON_SPARK_JAR := $(JAVA_DIR)/paimon-spark-3.5-0.9.0.jar
# JDBC drivers for Java's JdbcCatalog (tests/interop/test_jdbc_catalog_java.py), beside the bundle
# on the oracle's runtime classpath: SQLite (its native library unpacks itself to tmp) and PostgreSQL.
SQLITE_JDBC_JAR := $(JAVA_DIR)/sqlite-jdbc-3.54.1.0.jar
POSTGRES_JDBC_JAR := $(JAVA_DIR)/postgresql-42.7.14.jar
ORACLE_CLASSES := $(JAVA_DIR)/classes/.stamp
ORACLE_SRC := $(wildcard tests/interop/java/*.java)

# Python caches each module it imports as bytecode (__pycache__) and reuses it in the next
# process. An environment with PYTHONDONTWRITEBYTECODE set (this machine's, and so CI's) and
# venvs installed --no-compile (below) would compile pandas, pyarrow and the package again in
# every process: every Spark Python worker and subprocess of the tests, about 4.7 CPU-s each to
# import paimon_pyspark.spark where the cache makes it 1.1 s. Only what is imported is compiled.
unexport PYTHONDONTWRITEBYTECODE

# one venv per other pyspark line the package is tested on (tests/versions)
include mk/pyspark_matrix.mk

.PHONY: demo test lint typecheck pytest pytest-spark pytest-core pytest-own bench bench-java soak clean

# pyproject.toml declares ranges; constraints.txt pins every package of this venv (CI stays
# deterministic). --no-compile, in every venv here: pip would byte-compile every module of every
# package (pyspark's and ray's thousands; about 40% of an install's CPU), where Python compiles
# the ones a run imports, once.
$(VENV)/.stamp: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip==25.3
	$(PY) -m pip install -q --no-compile -c constraints.txt -e ".[test]"
	touch $@

# pypaimon 2.1 pins pyarrow<20, so the second oracle lives in its own venv.
$(PYPAIMON_VENV)/.stamp: tests/interop/pypaimon-requirements.txt
	$(PYTHON) -m venv $(PYPAIMON_VENV)
	$(PYPAIMON_VENV)/bin/python -m pip install -q --no-compile -r tests/interop/pypaimon-requirements.txt
	touch $@

$(SPARK35_VENV)/.stamp: bench/spark35-requirements.txt
	$(PYTHON) -m venv $(SPARK35_VENV)
	$(SPARK35_VENV)/bin/python -m pip install -q -r bench/spark35-requirements.txt
	touch $@

$(LAKES_VENV)/.stamp: bench/lakes-requirements.txt
	$(PYTHON) -m venv $(LAKES_VENV)
	$(LAKES_VENV)/bin/python -m pip install -q -r bench/lakes-requirements.txt
	touch $@

$(PAIMON_SPARK_JAR):
	mkdir -p $(JAVA_DIR)
	mvn -q -B dependency:copy -Dartifact=org.apache.paimon:paimon-spark-3.5:0.9.0 \
		-DoutputDirectory=$(JAVA_DIR)

$(PAIMON_JAR):
	mkdir -p $(JAVA_DIR)
	mvn -q -B dependency:copy -Dartifact=org.apache.paimon:paimon-bundle:$(PAIMON_JAVA_VERSION) \
		-DoutputDirectory=$(JAVA_DIR)

$(PAIMON_S3_JAR):
	mkdir -p $(JAVA_DIR)
	mvn -q -B dependency:copy -Dartifact=org.apache.paimon:paimon-s3:$(PAIMON_JAVA_VERSION) \
		-DoutputDirectory=$(JAVA_DIR)

$(SQLITE_JDBC_JAR):
	mkdir -p $(JAVA_DIR)
	mvn -q -B dependency:copy -Dartifact=org.xerial:sqlite-jdbc:3.54.1.0 -DoutputDirectory=$(JAVA_DIR)

$(POSTGRES_JDBC_JAR):
	mkdir -p $(JAVA_DIR)
	mvn -q -B dependency:copy -Dartifact=org.postgresql:postgresql:42.7.14 -DoutputDirectory=$(JAVA_DIR)

$(ORACLE_CLASSES): $(PAIMON_JAR) $(PAIMON_S3_JAR) $(ORACLE_SRC) $(VENV)/.stamp
	mkdir -p $(JAVA_DIR)/classes
	javac -nowarn -d $(JAVA_DIR)/classes \
		-cp "$(PAIMON_JAR):$$($(PY) -c 'import pyspark,os;print(os.path.join(os.path.dirname(pyspark.__file__),"jars"))')/*" \
		$(ORACLE_SRC)
	touch $@

demo: $(VENV)/.stamp
	PYSPARK_PYTHON=$(abspath $(PY)) $(VENV)/bin/paimon-pyspark demo
	PYSPARK_PYTHON=$(abspath $(PY)) $(VENV)/bin/paimon-pyspark sql --warehouse demo-warehouse \
		--echo -f examples/sql/postpone_bucket_table.sql
	PYSPARK_PYTHON=$(abspath $(PY)) $(VENV)/bin/paimon-pyspark sql --warehouse demo-warehouse \
		--echo -f examples/sql/java_connector_table_life.sql

lint: $(VENV)/.stamp
	$(VENV)/bin/ruff check src tests bench examples
	$(VENV)/bin/ruff format --check src tests bench examples

typecheck: $(VENV)/.stamp
	$(VENV)/bin/mypy

PYTEST := PYSPARK_PYTHON=$(abspath $(PY)) $(PY) -m pytest -q -p no:cacheprovider
PYTEST_DEPS := $(VENV)/.stamp $(PYPAIMON_VENV)/.stamp $(ORACLE_CLASSES) $(PYSPARK_MATRIX_STAMPS) \
	$(WHEEL_VENV)/.stamp $(SPARK35_VENV)/.stamp $(PAIMON_SPARK_JAR) $(SQLITE_JDBC_JAR) $(POSTGRES_JDBC_JAR)

# Debian's PostgreSQL server (initdb, pg_ctl) for the JDBC catalog's tests and bench: they start
# their own on 127.0.0.1 (tests/catalogs/postgres.py); installed once if missing (needs root).
POSTGRES_SERVER := .cache/postgresql.stamp
$(POSTGRES_SERVER):
	@mkdir -p $(@D)
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends postgresql; }
	touch $@
PYTEST_DEPS += $(POSTGRES_SERVER)

pytest: $(PYTEST_DEPS)
	$(PYTEST) $(PYTEST_ARGS)

# tests/conftest.py marks the tests on the SparkSession uses_spark: the two halves share no
# session, server or directory, so they run as two processes at once. A few tests marked
# spark_half go with the Spark half to balance them. Tests marked own_job (minutes each, much of
# it waiting on other processes: the short soak, the standalone cluster) run as a third process.
pytest-spark: $(PYTEST_DEPS)
	$(PYTEST) -m "(uses_spark or spark_half) and not own_job" $(PYTEST_ARGS)

# its output goes to a log, printed when it ends, so the Spark half's progress stays readable
pytest-core: $(PYTEST_DEPS)
	$(PYTEST) -m "not uses_spark and not spark_half and not own_job" $(PYTEST_ARGS) \
		> .cache/pytest-core.log 2>&1; rc=$$?; cat .cache/pytest-core.log; exit $$rc

pytest-own: $(PYTEST_DEPS)
	$(PYTEST) -m "own_job" $(PYTEST_ARGS) > .cache/pytest-own.log 2>&1; \
		rc=$$?; cat .cache/pytest-own.log; exit $$rc

TEST_JOBS := lint typecheck pytest-spark pytest-core pytest-own

# Downloads and builds first, three at a time; then the jobs side by side (-k: every job runs
# to its end, and any failure fails the run).
test:
	$(MAKE) --no-print-directory -j3 $(PYTEST_DEPS)
	$(MAKE) --no-print-directory -k -j$(words $(TEST_JOBS)) $(TEST_JOBS)

# The whole Spark and core suites again in the lowest-versions venv (mk/pyspark_matrix.mk: the
# lowest pyspark, pyarrow, numpy, pandas, fastavro, sqlglot, and the package as its wheel), as two
# processes at once like `make test`; not part of `make test` (which runs a fast part of the core
# suite there, and every Spark door once). tests/versions is the matrix itself, and tests/test_packaging.py
# builds with the test venv's tools. Then the whole Spark suite in the pyspark 3.5 venv, on the
# package's wheel: `make test` runs a fast part of it (tests/versions/test_pyspark35.py); the
# tests marked `datasource` skip there, naming what that pyspark lacks.
.PHONY: test-matrix test-matrix-spark test-matrix-core test-matrix-pyspark35
LOWEST_VENV := .venv-pyspark41
LOWEST_PYTEST := PYSPARK_PYTHON=$(abspath $(LOWEST_VENV)/bin/python) $(LOWEST_VENV)/bin/python \
	-m pytest -q -p no:cacheprovider --ignore=tests/versions --ignore=tests/test_packaging.py
PYSPARK35_VENV := .venv-pyspark35

test-matrix: $(PYTEST_DEPS) $(LOWEST_VENV)/.matrix
	$(MAKE) --no-print-directory -k -j2 test-matrix-spark test-matrix-core test-matrix-pyspark35

test-matrix-spark:
	$(LOWEST_PYTEST) -m "uses_spark or spark_half" $(PYTEST_ARGS)

test-matrix-core:
	$(LOWEST_PYTEST) -m "not uses_spark and not spark_half" $(PYTEST_ARGS) > .cache/pytest-matrix-core.log 2>&1; \
		rc=$$?; cat .cache/pytest-matrix-core.log; exit $$rc

# its output goes to a log too, printed when it ends
test-matrix-pyspark35:
	env -u SPARK_HOME -u PYTHONPATH PYSPARK_PYTHON=$(abspath $(PYSPARK35_VENV)/bin/python) \
		$(PYSPARK35_VENV)/bin/python -m pytest -q -p no:cacheprovider -rs tests/spark $(PYTEST_ARGS) \
		> .cache/pytest-matrix-pyspark35.log 2>&1; rc=$$?; cat .cache/pytest-matrix-pyspark35.log; exit $$rc

bench-java: $(SPARK35_VENV)/.stamp $(PAIMON_SPARK_JAR)

# .venv-pyspark35: the pyspark 3.5 leg of spark_write_read.py and spark_read_queries.py (issue 42)
bench: $(VENV)/.stamp $(PYPAIMON_VENV)/.stamp $(LAKES_VENV)/.stamp bench-java $(PYSPARK35_VENV)/.wheel
	$(PY) bench/append_write_read.py
	$(PY) bench/core_vs_lakes.py
	$(PY) bench/scale_write_read.py
	$(PY) bench/spark_write_read.py
	$(PY) bench/pk_write_read.py
	$(PY) bench/dv_read.py
	$(PY) bench/file_index_lookup.py
	$(PY) bench/postpone_write.py
	$(PY) bench/dynamic_bucket_upsert.py
	$(PY) bench/s3_commit_write.py
	$(PY) bench/memory_bounds.py
	$(PY) bench/sort_compact.py
	$(PY) bench/pk_write_compaction.py
	$(PY) bench/spark_read_queries.py
	$(PY) bench/changelog_producers.py
	$(PY) bench/catalog_commits.py
	$(PY) bench/long_runs.py

# The soak (tests/soak/soak_run.py; tests/soak/test_soak.py is its 3-minute version in make
# test): issue 44's 20 minutes on local disk and 20 on S3 through the fault proxy (4 writers, one
# of them Spark, a compactor, orphan cleaning, a stream reader, a SIGKILL every 30-90 s), then
# issue 36's fast kills (every 3-8 s, snapshots expiring after 1 s; no Spark there), then the
# executor-loss jobs at 2,000,000 rows and the 8 x 50 commit race on faulty S3 (make test runs
# both shorter). Every step runs; a run whose checks failed fails the target at the end.
soak: $(VENV)/.stamp $(ORACLE_CLASSES)
	rc=0; \
	$(PY) tests/soak/soak_run.py soak --seconds 1200 || rc=1; \
	$(PY) tests/soak/soak_run.py soak --s3 --seconds 1200 || rc=1; \
	$(PY) tests/soak/soak_run.py soak --seconds 120 --runs 3 --kill-min 3 --kill-max 8 \
		--retain-min 5 --no-spark --no-java || rc=1; \
	$(PY) tests/soak/soak_run.py soak --seconds 120 --runs 3 --kill-min 3 --kill-max 8 \
		--retain-min 1 --no-spark --no-java || rc=1; \
	PAIMON_EXECUTOR_LOSS_ROWS=2000000 $(PYTEST) -s tests/spark/test_executor_loss.py || rc=1; \
	PAIMON_FAULTY_RACE_COMMITS=50 $(PYTEST) -s tests/integration/test_racing_commits.py \
		-k faulty_s3 || rc=1; \
	exit $$rc

clean: clean-pyspark-matrix
	rm -rf $(VENV) $(PYPAIMON_VENV) $(SPARK35_VENV) $(LAKES_VENV) $(WHEEL_VENV) .cache build src/*.egg-info
