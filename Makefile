# focuscrawl — `make demo` runs an offline focused crawl; `make test` runs the tests.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export FOCUSCRAWL_CORPORA ?= $(abspath ../shared/corpora)

.PHONY: install demo test test-fast lint format bench bench-extract bench-frontier eval clean

$(STAMP): pyproject.toml harness/pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[redis,eval,dev,render,postgres]' -e ./harness
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/focuscrawl demo

# two pytest processes, a test file's tests in one of them (its module fixtures start once):
# most tests wait on crawls, servers and leases, not on a core; TEST_JOBS=0 runs in one process
TEST_JOBS ?= 2
test: $(STAMP)
	scripts/setup-system
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(TEST_JOBS) --dist loadfile $(PYTEST_ARGS)

test-fast: $(STAMP)
	scripts/setup-system
	$(BIN)/python -m pytest -q -x -m "not slow" $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check focuscrawl harness tests bench
	$(BIN)/ruff format --check focuscrawl harness tests bench

format: $(STAMP)
	$(BIN)/ruff format focuscrawl harness tests bench
	$(BIN)/ruff check --fix focuscrawl harness tests bench

# Every bench/bench_*.py runs, each printing its baseline side by side and the ratio.
bench: $(STAMP)
	@set -e; for b in bench/bench_*.py; do echo "== $$b"; $(BIN)/python $$b; done

bench-extract: $(STAMP)
	$(BIN)/python bench/bench_extract.py

bench-frontier: $(STAMP)
	$(BIN)/python bench/bench_frontier.py

eval: $(STAMP)
	$(BIN)/focuscrawl eval --corpus wikispeedia --topic subject.Science.Biology.Birds

clean:
	rm -rf $(VENV) out reports .pytest_cache .ruff_cache
