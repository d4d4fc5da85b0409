# The pyspark version matrix (issues 16, 22 and 42): one venv per other pyspark minor line the
# package is tested on. Each gets that line's pins first, then the package as a user gets it:
# its wheel with the `spark` extra, installed by pip with the index open; `pip freeze` before and
# after is kept in the venv, and tests/versions/test_lowest_versions.py checks that the install
# changed nothing that was there (pyspark above all) and added only the package's dependencies.
# tests/versions/test_pyspark_versions.py runs the same probe in each and in $(VENV).
# .venv-pyspark35 is the 3.5 line (no Python Data Source): pyspark and pytest, then the wheel;
# tests/versions/test_pyspark35.py runs a fast part of tests/spark there in `make test`, and
# `make test-matrix` all of it (Makefile, test-matrix-pyspark35).
# .venv-pyspark41 is also the lowest-versions leg: its requirements pin the whole venv at the
# lowest pyspark, pyarrow, numpy, pandas, fastavro and sqlglot pyproject.toml admits, with what
# `make test` runs there (a fast part of the core suite, the probe with every Spark door);
# `make test-matrix` adds tests/versions/lowest-matrix-requirements.txt and runs everything there.
# A venv is rebuilt only when its requirements change (about 45 s from pip's cache; cold, pyspark
# is a ~450 MB sdist that pip builds into a wheel in ~3 min); the wheel is rebuilt and
# reinstalled when the package's sources change (a few seconds).

PYTHON ?= python3.11
# A line is a requirements file: tests/versions/pyspark41-requirements.txt makes .venv-pyspark41.
PYSPARK_MATRIX_LINES := $(patsubst tests/versions/pyspark%-requirements.txt,%,\
	$(wildcard tests/versions/pyspark*-requirements.txt))
PYSPARK_MATRIX_STAMPS := $(foreach v,$(PYSPARK_MATRIX_LINES),.venv-pyspark$(v)/.wheel)

# The wheel of the package, built by the test venv's pinned build tools from a copy of the files
# it is made of (so no build/ or egg-info lands in the tree).
WHEEL_DIR := .cache/wheel
WHEEL_SOURCES := pyproject.toml README.md CHANGELOG.md \
	$(shell find src -type f \( -name '*.py' -o -name py.typed \) -not -path '*/__pycache__/*')

$(WHEEL_DIR)/.stamp: $(VENV)/.stamp $(WHEEL_SOURCES)
	rm -rf $(WHEEL_DIR) && mkdir -p $(WHEEL_DIR)/tree
	cp pyproject.toml README.md CHANGELOG.md $(WHEEL_DIR)/tree/
	cp -r src $(WHEEL_DIR)/tree/src
	find $(WHEEL_DIR)/tree -name __pycache__ -prune -exec rm -rf {} +
	$(VENV)/bin/python -m build -q --wheel --no-isolation --outdir $(WHEEL_DIR) $(WHEEL_DIR)/tree \
		> $(WHEEL_DIR)/build.log 2>&1 || (cat $(WHEEL_DIR)/build.log; exit 1)
	rm -rf $(WHEEL_DIR)/tree
	touch $@

# Reached only through the pattern rule below, the stamp would count as an intermediate file:
# make would delete it after each build and rebuild the venv from scratch on the next.
.PRECIOUS: .venv-pyspark%/.stamp
.venv-pyspark%/.stamp: tests/versions/pyspark%-requirements.txt
	rm -rf .venv-pyspark$*
	$(PYTHON) -m venv .venv-pyspark$*
	.venv-pyspark$*/bin/python -m pip install -q --no-compile -r tests/versions/pyspark$*-requirements.txt
	touch $@

.venv-pyspark%/.wheel: .venv-pyspark%/.stamp $(WHEEL_DIR)/.stamp
	.venv-pyspark$*/bin/python -m pip uninstall -q -y paimon-pyspark
	.venv-pyspark$*/bin/python -m pip freeze > .venv-pyspark$*/freeze-before.txt
	.venv-pyspark$*/bin/python -m pip install -q --no-compile "$$(ls $(WHEEL_DIR)/paimon_pyspark-*.whl)[spark]"
	.venv-pyspark$*/bin/python -m pip freeze --exclude paimon-pyspark \
		> .venv-pyspark$*/freeze-after.txt
	touch $@

# make test-matrix only: what the whole suites need besides the fast part's pins
.venv-pyspark41/.matrix: .venv-pyspark41/.wheel tests/versions/lowest-matrix-requirements.txt
	.venv-pyspark41/bin/python -m pip install -q --no-compile -r tests/versions/lowest-matrix-requirements.txt
	touch $@

.PHONY: pyspark-matrix clean-pyspark-matrix

pyspark-matrix: $(PYSPARK_MATRIX_STAMPS)

clean-pyspark-matrix:
	rm -rf $(foreach v,$(PYSPARK_MATRIX_LINES),.venv-pyspark$(v))

# The wheel alone in a fresh venv, as `pip install paimon-pyspark` gives it: its runtime
# dependencies and nothing else, at constraints.txt's versions (tests/test_packaging.py).
WHEEL_VENV := .venv-wheel
$(WHEEL_VENV)/.stamp: $(WHEEL_DIR)/.stamp constraints.txt
	rm -rf $(WHEEL_VENV)
	$(PYTHON) -m venv $(WHEEL_VENV)
	$(WHEEL_VENV)/bin/python -m pip install -q --no-compile -c constraints.txt \
		"$$(ls $(WHEEL_DIR)/paimon_pyspark-*.whl)"
	touch $@
