# KnowHub developer commands. `make run` and `make test` set up the virtualenv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PROTOS := $(wildcard protos/knowhub/v1/*.proto)
GENERATED := clients/python/knowhub/v1

.PHONY: setup run test bench reliability lint proto proto-check

setup: $(STAMP)

$(STAMP): pyproject.toml clients/python/pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit("KnowHub needs Python 3.10 or newer, found " + sys.version.split()[0]) if sys.version_info < (3, 10) else None'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: setup
	$(BIN)/knowhub up $(ARGS)

test: setup
	$(BIN)/pytest -q $(ARGS)

bench: setup
	$(BIN)/python -m bench $(ARGS)

# The reliability suite at full size (CI runs it small as part of `make test`).
reliability: setup
	KNOWHUB_RELIABILITY=full $(BIN)/pytest -q tests/reliability $(ARGS)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache

proto: setup
	$(BIN)/python -m grpc_tools.protoc -I protos --python_out=clients/python \
		--pyi_out=clients/python --grpc_python_out=clients/python $(PROTOS)

# Fails when the committed generated code differs from what the protos produce.
proto-check: proto
	@git diff --exit-code --stat -- $(GENERATED) && \
	test -z "$$(git status --porcelain -- $(GENERATED))" || \
	{ echo "Generated protobuf code is stale: run 'make proto' and commit the result."; exit 1; }
