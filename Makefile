# Every target sets itself up: a fresh machine needs only python3.11 and go on PATH.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: simulate test lint unit install protos bench clean

simulate: install ## run the offline simulation on its built-in default
	$(BIN)/npu-dra simulate

test: install lint ## the whole suite: lint, types, hexagon contracts, unit, contract and e2e tests
	$(BIN)/pytest -q tests

lint: install
	$(BIN)/ruff check src tests benchmarks tools
	$(BIN)/ruff format --check src tests benchmarks tools
	$(BIN)/mypy -p npu_dra
	$(BIN)/lint-imports
	$(BIN)/python tools/check_sizes.py

bench: install ## print the benchmark figures
	$(BIN)/python -m benchmarks

protos: install ## regenerate src/adapters/grpc/gen from protos/
	$(BIN)/python tools/codegen.py

$(BIN)/python:
	$(shell command -v $(PY) >/dev/null 2>&1 && echo $(PY) || echo python3) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# The editable install uses setuptools' "strict" mode (a link tree) because src/ is installed
# under the name npu_dra; it is refreshed on every run so new modules are always importable.
# Then its modules are byte-compiled, as pip does for a wheel: without it a machine that sets
# PYTHONDONTWRITEBYTECODE compiles them again in every process the tests and benchmarks start.
install: $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]' --config-settings editable_mode=strict
	$(BIN)/python -m compileall -q -j 0 build/__editable__.npu_dra-*/npu_dra

clean:
	rm -rf $(VENV) build *.egg-info
