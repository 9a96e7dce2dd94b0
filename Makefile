SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PG_URL ?= postgres://postgres@127.0.0.1:5432/loopweb
TEST_DATABASE_URL ?= $(if $(DATABASE_URL),$(DATABASE_URL),$(PG_URL))
PYTEST_ARGS ?=

.PHONY: setup demo serve test test-fast test-sqlite test-browser-repeat lint format bench fuzz \
	stress scale browsers clean

$(PY):
	"$$(scripts/find-python)" -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	@scripts/demo

# The production shape on PostgreSQL: gunicorn (2 web processes × 8 threads) and 2 task workers.
serve: setup
	@DATABASE_URL=$(or $(DATABASE_URL),$(PG_URL)) scripts/serve

test: setup
	DATABASE_URL=$(TEST_DATABASE_URL) DEBUG=1 $(PY) -m pytest -n 2 --dist loadgroup $(PYTEST_ARGS)

# The suite without the browser, stress, fuzz, scale and benchmark tests, with the core modules'
# coverage and its floor (pyproject's [tool.coverage.report] names the modules). `--lf` works:
# PYTEST_ARGS="--lf" reruns what failed last.
COVERAGE_FLOOR ?= 90
test-fast: setup
	DATABASE_URL=$(TEST_DATABASE_URL) DEBUG=1 $(PY) -m pytest -n 2 --dist loadgroup -m "not browser" \
	  --ignore=tests/stress --ignore=tests/fuzz --ignore=tests/scale --ignore=tests/bench \
	  --cov --cov-report=term --cov-fail-under=$(COVERAGE_FLOOR) $(PYTEST_ARGS)

# The suite's tests that reach the database, on SQLite, the demo's database, minus those that need
# PostgreSQL itself (marked postgres) and the browser journeys; the tests that reach no database
# answer alike on both, and the journeys' requests are the console tests' (both run in make test).
# Each xdist worker gets a fresh file of its own: var/test_sqlite-suite.sqlite3_gw0, ...
SQLITE_URL := sqlite:///$(CURDIR)/var/sqlite-suite.sqlite3
test-sqlite: setup
	@mkdir -p var; rm -f var/test_sqlite-suite.sqlite3*
	DATABASE_URL=$(SQLITE_URL) DEBUG=1 LOOPWEB_DATABASE_TESTS_ONLY=1 $(PY) -m pytest -n 2 --dist loadgroup -m "not postgres and not browser" $(PYTEST_ARGS)

# The browser journeys, BROWSER_REPEAT times in a row: a wait that depends on the machine's speed
# shows up here before it reaches CI. LOOPWEB_BROWSER_SLOW_MO=250 slows every action down.
BROWSER_REPEAT ?= 10
test-browser-repeat: setup
	@mkdir -p var; passed=0; for i in $$(seq 1 $(BROWSER_REPEAT)); do \
	  if DATABASE_URL=$(TEST_DATABASE_URL) DEBUG=1 $(PY) -m pytest -m browser -p no:xdist -q $(PYTEST_ARGS) >var/browser-run-$$i.log 2>&1; \
	  then passed=$$((passed + 1)); echo "run $$i: passed"; \
	  else echo "run $$i: FAILED (var/browser-run-$$i.log)"; tail -n 30 var/browser-run-$$i.log; fi; \
	done; echo "$$passed of $(BROWSER_REPEAT) runs passed"; [ "$$passed" -eq $(BROWSER_REPEAT) ]

# ruff, the migrations, the layers and the pure modules (import-linter), the types (mypy: strict
# on the pure modules and the services). docs/architecture.md explains the contracts.
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	DEBUG=1 $(PY) manage.py makemigrations --check --dry-run
	DEBUG=1 $(VENV)/bin/lint-imports --no-cache
	DEBUG=1 $(VENV)/bin/mypy .

format: setup
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: setup
	DATABASE_URL=$(TEST_DATABASE_URL) DEBUG=1 $(PY) -m bench

# schemathesis with every check against a live server, FUZZ_EXAMPLES generated requests per
# operation as an owner and as a driver (make test runs 2); figures land in var/reliability/.
FUZZ_EXAMPLES ?= 40
fuzz: setup
	DATABASE_URL=$(TEST_DATABASE_URL) DEBUG=1 LOOPWEB_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest tests/fuzz -p no:xdist -q $(PYTEST_ARGS)

# The nightly concurrency stress (make test runs 20 short scenarios); STRESS_SEED shifts the seeds.
STRESS_SCENARIOS ?= 200
STRESS_SEED ?= 1
stress: setup
	DATABASE_URL=$(TEST_DATABASE_URL) DEBUG=1 LOOPWEB_STRESS_SCENARIOS=$(STRESS_SCENARIOS) LOOPWEB_STRESS_SEED=$(STRESS_SEED) $(PY) -m pytest tests/stress -p no:xdist -q $(PYTEST_ARGS)

# The production shape at scale, with faults: 3 web processes, 2 task workers and 32 simulated
# drivers climb a 100 × 20 ladder while a web process and a task worker are killed and PostgreSQL
# is restarted (LOOPWEB_SCALE_RESTART=0 cuts its connections instead). Figures: var/scale/full.json.
scale: setup
	DATABASE_URL=$(TEST_DATABASE_URL) DEBUG=1 LOOPWEB_SCALE=full $(PY) -m pytest tests/scale -p no:xdist -q -s $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) var
