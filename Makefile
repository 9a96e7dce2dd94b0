SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PG_URL ?= postgres://postgres@127.0.0.1:5432/loopweb
TEST_DATABASE_URL ?= $(if $(DATABASE_URL),$(DATABASE_URL),$(PG_URL))
PYTEST_ARGS ?=

.PHONY: setup demo test lint format bench fuzz browsers clean

$(PY):
	"$$(scripts/find-python)" -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	@scripts/demo

test: setup
	DATABASE_URL=$(TEST_DATABASE_URL) DEBUG=1 $(PY) -m pytest -n 2 --dist loadgroup $(PYTEST_ARGS)

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	DEBUG=1 $(PY) manage.py makemigrations --check --dry-run

format: setup
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: setup
	DATABASE_URL=$(TEST_DATABASE_URL) DEBUG=1 $(PY) -m bench

fuzz: setup
	DATABASE_URL=$(TEST_DATABASE_URL) DEBUG=1 LOOPWEB_FUZZ_EXAMPLES=2000 $(PY) -m pytest tests/fuzz -p no:xdist

clean:
	rm -rf $(VENV) var
