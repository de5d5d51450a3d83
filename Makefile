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

LOCK   := requirements.lock
# pip-tools runs in a throwaway venv of its own: it is needed only to write the lock.
LOCK_VENV := var/lock-tools
PIP_TOOLS ?= pip-tools==7.6.2

.PHONY: setup demo serve test lint format bench clean lock

# Every app and dev dependency (and setuptools, which builds our editable install) comes
# from the lock, pinned and hashed; then the project itself, without resolving anything.
$(STAMP): $(LOCK) pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --require-hashes -r $(LOCK)
	$(BIN)/python -m pip install -q --no-deps --no-build-isolation -e .
	@touch $(STAMP)

setup: $(STAMP)

# Re-resolve the lock from pyproject.toml's ranges, keeping the pins already in it where
# they still fit (pass PIP_COMPILE_ARGS=--upgrade, or --upgrade-package NAME, to move).
lock:
	@test -x $(LOCK_VENV)/bin/pip-compile || \
		{ $(PYTHON) -m venv $(LOCK_VENV) && $(LOCK_VENV)/bin/python -m pip install -q $(PIP_TOOLS); }
	$(LOCK_VENV)/bin/pip-compile --quiet --generate-hashes --allow-unsafe --strip-extras \
		--no-emit-index-url --no-emit-find-links --extra dev --build-deps-for editable \
		$(PIP_COMPILE_ARGS) --output-file $(LOCK) pyproject.toml

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
