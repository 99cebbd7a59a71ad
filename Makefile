# KnowHub developer commands. `make run` installs what the hub needs into the virtualenv;
# `make test` and the other development commands add the development tools.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# setuptools tells, on each editable install (the hub's, the SDK's, the contracts'), to
# beware of folders named like its packages in the working directory: here those folders
# are the packages themselves, so the notice is left out.
PIP := PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip --quiet
# What `make run` needs (the hub), and what `make setup` adds (the development tools), each
# installed in editable mode, so a change to the sources applies at once. The hub
# (knowhub, here) depends on the SDK (knowhub-client, clients/python) and the contracts
# (knowhub-contracts, protos): all three go in one pip command, so pip takes the pinned
# SDK and contracts from this checkout, not from an index.
LOCAL_DISTS := -e protos -e clients/python
PROJECTS := pyproject.toml clients/python/pyproject.toml protos/pyproject.toml
HUB_STAMP := $(VENV)/.installed-hub
DEV_STAMP := $(VENV)/.installed
PROTOS := $(wildcard protos/knowhub/v1/*.proto)
GENERATED := protos/knowhub_contracts/v1
SYNC_SDK := clients/python/knowhub/_sync

.PHONY: setup run test test-fast bench reliability lint typecheck docs proto proto-check sdk-sync \
	sdk-sync-check vendor-js

setup: $(DEV_STAMP)

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit("KnowHub needs Python 3.11 or newer, found " + sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip

$(HUB_STAMP): $(PROJECTS) | $(BIN)/python
	@echo "Installing KnowHub into $(VENV): a minute or two the first time"
	$(PIP) install $(LOCAL_DISTS) -e '.[embedded]'
	touch $@

$(DEV_STAMP): $(PROJECTS) | $(BIN)/python
	@echo "Installing KnowHub and its development tools into $(VENV): a few minutes the first time"
	$(PIP) install $(LOCAL_DISTS) -e '.[dev]'
	touch $@ $(HUB_STAMP)

run: $(HUB_STAMP)
	$(BIN)/knowhub up $(ARGS)

# Tests run in parallel, two workers per core (most of a test's time is spent waiting on
# the hubs, Redis and browsers it starts, so a second worker per core fills that time),
# each test file on one worker (its module's hub and its docs blocks in order; JOBS=0 runs
# them in this process); ARGS narrows them, e.g. `make test ARGS=tests/knowledge`.
JOBS ?= $(shell $(PYTHON) -c 'import os; print(2 * (os.cpu_count() or 1))')
test: setup
	$(BIN)/pytest -q -n $(JOBS) --dist loadfile $(ARGS)

# The quick tests for the change at hand: no browser, docs, reliability or deploy tests.
test-fast: setup
	$(BIN)/pytest -q -n $(JOBS) --dist loadfile -m "not slow and not browser and not docs" $(ARGS)

bench: setup
	$(BIN)/python -m bench $(ARGS)

# The reliability suite at full size (CI runs it small as part of `make test`).
reliability: setup
	KNOWHUB_RELIABILITY=full $(BIN)/pytest -q --timeout 3600 tests/reliability $(ARGS)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache

# mypy --strict over the server, the SDK (as its users see it: the shipped .pyi stubs of the
# generated code included) and the typed usage examples in tests/sdk.
typecheck: setup
	$(BIN)/mypy

# The docs site in site/: docs/ plus the references generated from the code (settings, CLI,
# gRPC, REST, SDK); --strict fails on any warning, such as a broken link.
docs: setup
	DISABLE_MKDOCS_2_WARNING=true NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# The protobuf code of the contracts (knowhub-contracts), as the package knowhub_contracts.v1:
# protoc writes it into a temporary folder under the protos' own path (knowhub/v1), and
# scripts/proto_imports.py moves it into the package, its imports pointed there. The
# _grpc.pyi stubs (mypy-protobuf) type the service stubs for blocking and asyncio use.
proto: setup
	@out=$$(mktemp -d) && trap 'rm -rf "$$out"' EXIT && \
	$(BIN)/python -m grpc_tools.protoc -I protos --python_out=$$out --pyi_out=$$out \
		--grpc_python_out=$$out --plugin=protoc-gen-mypy_grpc=$(BIN)/protoc-gen-mypy_grpc \
		--mypy_grpc_out=$$out $(PROTOS) && \
	$(BIN)/python scripts/proto_imports.py $$out/knowhub/v1 $(GENERATED)

# Fails when the committed generated code differs from what the protos produce.
proto-check: proto
	@git diff --exit-code --stat -- $(GENERATED) && \
	test -z "$$(git status --porcelain -- $(GENERATED))" || \
	{ echo "Generated protobuf code is stale: run 'make proto' and commit the result."; exit 1; }

# The blocking SDK (knowhub/_sync) is generated from the asyncio one (knowhub/_async).
sdk-sync: setup
	$(BIN)/python clients/python/scripts/generate_sync.py

# Fails when the committed blocking SDK differs from what the asyncio one generates.
sdk-sync-check: sdk-sync
	@git diff --exit-code --stat -- $(SYNC_SDK) && \
	test -z "$$(git status --porcelain -- $(SYNC_SDK))" || \
	{ echo "The blocking SDK is stale: run 'make sdk-sync' and commit the result."; exit 1; }

# Re-fetches the vendored JavaScript from the npm registry with `npm pack`: the console's
# graph layout library (@dagrejs/dagre) and the Swagger UI of /docs; the versions are in
# the scripts.
vendor-js:
	./scripts/vendor_console_js.sh
	./scripts/vendor_swagger_ui.sh
