# readerstudy: `make demo` and `make test` work on a fresh machine (they bootstrap .venv).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
PORT   ?= 8501
# Tests prove PostgreSQL too; CI=true makes an unreachable server a failure.
READERSTUDY_TEST_POSTGRES_URL ?= postgresql://postgres@127.0.0.1:5432/test
export READERSTUDY_TEST_POSTGRES_URL
PYTEST_ARGS ?=

.PHONY: setup demo serve test lint format bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/readerstudy demo --port $(PORT)

serve: setup
	$(BIN)/readerstudy serve --port $(PORT)

test: setup
	$(BIN)/python -m pytest -n 2 --dist loadgroup -ra $(PYTEST_ARGS)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: setup
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: setup
	$(BIN)/python -m benchmarks.run_all

clean:
	rm -rf var test-artifacts .pytest_cache .mypy_cache .ruff_cache
