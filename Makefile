# fairgate: `make demo` and `make test` do all set-up on a fresh machine (python3 3.11, pip, cargo).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: demo test build lint rust-test py-test bench bench-engine bench-micro clean

$(STAMP): requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.lock
	touch $@

# Builds the core and the bindings in release mode into the virtual environment.
build: $(STAMP)
	$(BIN)/maturin develop --release --quiet

demo: build
	$(BIN)/fairgate run scenarios/showcase.toml --out demo-out --plot
	@echo "plot: demo-out/plot.png"

lint: $(STAMP)
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(BIN)/ruff check python tests
	$(BIN)/ruff format --check python tests

rust-test:
	cargo test -p fairgate-core

# pytest exits 5 when it collects no test; that is a failure of the suite, not a pass.
py-test: build
	$(BIN)/pytest -q; status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$status

test: lint rust-test py-test

bench: bench-engine bench-micro

bench-engine:
	cargo run --release -p fairgate-core --bin fairgate-bench
	cargo run --release -p fairgate-core --bin fairgate-bench-workloads

bench-micro:
	cargo bench -p fairgate-core -- --warm-up-time 1 --measurement-time 3

clean:
	rm -rf $(VENV) target demo-out out
