# Every target sets itself up: a fresh machine needs only python3.11 and go on PATH.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Where each tier writes its junit file; `make test` prints the slowest tests from them.
RESULTS := build/test-results
# Workers: the fast tier is CPU-bound (one per core); the e2e tier mostly waits on kubelet
# relists and scheduler loops, so it runs more workers than cores (docs/developing.md: Tiers).
CHECK_WORKERS ?= 2
E2E_WORKERS ?= 4
PYTEST := $(BIN)/pytest -q -p no:cacheprovider
# The e2e tier's units of work: a module each, the real node one (tests/support/tiers.py).
E2E_DIST := --dist loadscope --no-loadscope-reorder

.PHONY: simulate test check unit e2e real-node lint install protos bench release clean

simulate: install ## run the offline simulation on its built-in default
	$(BIN)/npu-dra simulate

# The whole suite, fast tier first so a unit failure shows at once. The builds the e2e tier
# needs (Kubernetes, containerd, helm, images; tests/support/prebuild.py) start in the
# background first and overlap lint and the fast tier; on a warm cache they take seconds.
test: install ## everything: lint, types, contracts, unit, contract, integration, e2e, real node
	@mkdir -p $(RESULTS) && rm -f $(RESULTS)/*.xml
	$(BIN)/python -m tests.support.prebuild --background $(RESULTS)/prebuild.log
	$(MAKE) --no-print-directory lint
	$(PYTEST) -n $(CHECK_WORKERS) -m "not e2e and not helm" tests \
		--junitxml=$(RESULTS)/fast.xml
	$(PYTEST) -n $(E2E_WORKERS) $(E2E_DIST) -m "e2e or helm" tests --junitxml=$(RESULTS)/e2e.xml; \
	status=$$?; \
	$(BIN)/python -m tests.support.prebuild --report $(RESULTS)/prebuild.log; \
	$(BIN)/python tools/test_report.py --slowest 30 $(RESULTS)/*.xml || status=1; \
	exit $$status

check: install lint ## the fast tier: lint, types, contracts, sizes, every test without a control plane
	$(PYTEST) -n $(CHECK_WORKERS) -m "not e2e" tests

unit: install ## tests/unit alone
	$(PYTEST) -n $(CHECK_WORKERS) tests/unit

e2e: install ## the tests on control planes (not the real node)
	$(PYTEST) -n $(E2E_WORKERS) $(E2E_DIST) -m "e2e and not real_node" tests

real-node: install ## the tests on the real node (kubelet + containerd + runc on this machine)
	$(PYTEST) -m real_node tests

lint: install
	$(BIN)/ruff check src tests benchmarks tools
	$(BIN)/ruff format --check src tests benchmarks tools
	$(BIN)/mypy -p npu_dra
	$(BIN)/lint-imports
	$(BIN)/python tools/check_sizes.py

bench: install ## print the benchmark figures
	$(BIN)/python -m benchmarks

# The release artifacts of this commit under build/release/<version>/ (tools/release.py): both
# images as OCI archives, the packaged chart, a CycloneDX SBOM of the image's Python packages
# and SHA256SUMS. cyclonedx-py is the release's own tool, so it is installed here, not in dev.
release: install ## build/release/<version>/: images (OCI), chart, SBOM, checksums
	$(BIN)/pip install -q 'cyclonedx-bom>=7,<8'
	$(BIN)/python -m tools.release

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
