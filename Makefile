# Two commands on a fresh clone: `make serve` and `make test`. Everything else is a building block.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export NO_MKDOCS_2_WARNING := 1
# keep jieba's dictionary cache inside the workspace
export TMPDIR ?= /tmp

.PHONY: serve build test lint assets lock snapshots clean help

help:
	@echo "make serve   install what is missing, then serve the site with live reload (http://127.0.0.1:8000/)"
	@echo "make test    install, build strictly, run every test"
	@echo "make build   strict build into site/"
	@echo "make snapshots  accept changed output of executed blocks (then review the diff in git)"
	@echo "make lock    re-resolve requirements.lock from pyproject.toml (needs network to PyPI)"

# Python environment from the hashed lock; re-created when the lock changes.
$(BIN)/.installed: requirements.lock
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11, 5) else "Python >= 3.11.5 is required; set PYTHON=/path/to/python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --require-hashes --no-deps -r requirements.lock
	touch $@

# Browser assets from npm, copied into docs/assets/vendor/ (git-ignored).
node_modules/.package-lock.json: package-lock.json
	npm ci --no-audit --no-fund
	touch $@

docs/assets/vendor/.copied: node_modules/.package-lock.json scripts/vendor_assets.py $(BIN)/.installed
	$(BIN)/python scripts/vendor_assets.py
	touch $@

assets: docs/assets/vendor/.copied

serve: $(BIN)/.installed assets
	$(BIN)/mkdocs serve --strict --livereload

build: $(BIN)/.installed assets
	$(BIN)/mkdocs build --strict --clean

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: build lint
	$(BIN)/pytest

snapshots: $(BIN)/.installed
	$(BIN)/pytest tests/test_snapshots.py --snapshot-update -q

lock: $(BIN)/.installed
	$(BIN)/pip install --quiet uv==0.13.8
	$(BIN)/uv pip compile pyproject.toml --python-version 3.11.5 --generate-hashes --quiet -o requirements.lock

clean:
	rm -rf site .pytest_cache docs/assets/vendor
