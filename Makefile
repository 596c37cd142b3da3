# fairgate: `make demo` and `make test` do all set-up on a fresh machine (python3 3.11, pip, cargo).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: demo test build lint rust-test py-test bench bench-engine bench-scale bench-atm bench-micro bench-sweep soak clean

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
	cargo clippy -p fairgate-core --bins --features hint-trace -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p fairgate-core
	$(BIN)/ruff check python tests
	$(BIN)/ruff format --check python tests

rust-test:
	cargo test -p fairgate-core

# pytest exits 5 when it collects no test; that is a failure of the suite, not a pass.
py-test: build
	$(BIN)/pytest -q; status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$status

test: lint rust-test py-test

bench: bench-engine bench-scale bench-atm bench-micro bench-sweep

bench-engine:
	cargo run --release -p fairgate-core --bin fairgate-bench
	cargo run --release -p fairgate-core --bin fairgate-bench-workloads
	cargo run --release -p fairgate-core --bin fairgate-bench-pep

# TCP dumbbells at 10 to 100,000 flows: build time, run time, events/s, peak RSS per flow.
bench-scale:
	cargo run --release -p fairgate-core --bin fairgate-scale

# scenarios/soak.toml until 10^9 events (about 10 minutes on one core): resident memory per
# chunk of simulated time, which must stay flat, and conservation at every chunk. Not part of
# `make bench` or `make test`; `SOAK_EVENTS=1e8 make soak` runs a shorter one.
SOAK_EVENTS ?= 1e9
soak:
	cargo run --release -p fairgate-core --bin fairgate-soak -- --events $(SOAK_EVENTS)

bench-atm:
	cargo run --release -p fairgate-core --bin fairgate-atm-bench

bench-micro:
	cargo bench -p fairgate-core -- --warm-up-time 1 --measurement-time 3

# 200 points of about 0.2 s: executor overhead per point, speed-up on the local cluster, and
# points per second on a scheduler with two workers on loopback.
bench-sweep: build
	$(BIN)/python -m fairgate.sweeps.bench

clean:
	rm -rf $(VENV) target demo-out out
