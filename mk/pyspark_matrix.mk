# The pyspark version matrix (issue 16): one venv per other pyspark minor line the package is
# tested on, each with our package installed editable beside that line's newest release.
# tests/versions/test_pyspark_versions.py runs the same probe in each and in $(VENV).
# .venv-pyspark41 is also the lowest-versions leg (issue 22): its requirements pin the whole venv
# at the lowest pyspark, pyarrow, numpy, pandas, fastavro and sqlglot pyproject.toml admits, with
# the test tools; tests/versions/test_lowest_versions.py runs a fast part of the core tests there
# inside `make test`, and `make test-matrix` (Makefile) the whole Spark and core suites.
# Each venv is rebuilt only when its requirements or pyproject.toml change: about 45 s from
# pip's cache, 3 min cold (pyspark is a ~450 MB sdist that pip builds into a wheel), ~870 MB.

PYTHON ?= python3.11
# A line is a requirements file: tests/versions/pyspark41-requirements.txt makes .venv-pyspark41.
PYSPARK_MATRIX_LINES := $(patsubst tests/versions/pyspark%-requirements.txt,%,\
	$(wildcard tests/versions/pyspark*-requirements.txt))
PYSPARK_MATRIX_STAMPS := $(foreach v,$(PYSPARK_MATRIX_LINES),.venv-pyspark$(v)/.stamp)

.PHONY: pyspark-matrix clean-pyspark-matrix

.venv-pyspark%/.stamp: tests/versions/pyspark%-requirements.txt pyproject.toml
	rm -rf .venv-pyspark$*
	$(PYTHON) -m venv .venv-pyspark$*
	.venv-pyspark$*/bin/python -m pip install -q -e . -r tests/versions/pyspark$*-requirements.txt
	touch $@

pyspark-matrix: $(PYSPARK_MATRIX_STAMPS)

clean-pyspark-matrix:
	rm -rf $(foreach v,$(PYSPARK_MATRIX_LINES),.venv-pyspark$(v))
