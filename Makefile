# mcp_ref -- `make run` runs the main job (cross-checking the everything example), `make test` installs and runs the tests.
# Both create .venv on their own; dependencies are (re)installed when setup.cfg changes.

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: help run test docs check-install spec spec-coverage lint bench soak conformance mutate mutate-sample clean
.DEFAULT_GOAL := help

help:
	@echo "make run            the main job: mcp-ref check cross-checks the everything example server (stdio)"
	@echo "make test           install mcp_ref with its extras into .venv, run the tests"
	@echo "make docs           the API reference and guides (Sphinx, warnings are errors) in docs/_build/html"
	@echo "make check-install  an ordinary install in a fresh venv, and mypy --strict on the newcomer app against it"
	@echo "make spec           fetch the MCP spec (every revision, ext-tasks) into spec/ and make its catalogues"
	@echo "                    (when ../shared/spec is not beside the checkout; FETCH=\"--source DIR --tasks-source DIR\""
	@echo "                    reads local clones instead of GitHub)"
	@echo "make spec-coverage  the requirement table per chapter, one per revision (REVISION=2026-07-28: that one only)"
	@echo "make lint           ruff check, ruff format --check, mypy --strict"
	@echo "make bench          the benchmarks (BENCH=... passes options to bench/run.py)"
	@echo "make soak           the everything server over HTTP for 1M messages, its RSS checked flat (SOAK=\"--messages 100000\")"
	@echo "make conformance    the official MCP conformance suite (needs npm)"
	@echo "make mutate         break each line citing a utilities/lifecycle/transports id; its tests must notice"
	@echo "                    (make mutate ID=basic/lifecycle#18: that id only; ID=\"a b\" for several;"
	@echo "                    ID=2026-07-28:basic/patterns/mrtr#4 one of another revision; REVISION=2026-07-28:"
	@echo "                    every implemented id of that revision, MUTATE=\"--chapter basic/patterns\" narrows it)"
	@echo "make mutate-sample  the same on a fixed sample of 20 ids, and 10 of 2026-07-28's own (CI runs it)"
	@echo "make clean          remove .venv and caches"

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# An editable install, plus a plain path entry (mcp_ref-checkout.pth) so that type checkers
# (mypy, pyright) find mcp_ref from any directory as with an ordinary install: the editable
# finder setuptools installs is an import hook they cannot follow. (editable_mode=compat
# writes the same entry but is deprecated and prints a banner; the filter hides only the
# notice every editable install prints, not deprecations.)
$(STAMP): setup.cfg pyproject.toml | $(PY)
	PYTHONWARNINGS='ignore:Editable installation' $(PY) -m pip install --quiet -e '.[test,http,validation,docs]'
	$(PY) -c 'import pathlib, sysconfig; pathlib.Path(sysconfig.get_path("purelib"), "mcp_ref-checkout.pth").write_text("$(CURDIR)\n")'
	touch $(STAMP)

# the everything example has a tool for each check that needs one; the config names them
DEMO_CONFIG := tests/crosscheck/everything.toml
run: $(STAMP)
	@$(PY) -m mcp_ref.cli check --config $(DEMO_CONFIG) -- $(PY) -m mcp_ref.examples.everything; status=$$?; echo; \
	if [ $$status -eq 0 ]; then echo "$(RUN_OK)"; else echo "$(RUN_FAILED)"; fi; exit $$status
RUN_OK := All good: the example server passed every check above, so it follows the MCP spec as far as mcp-ref can tell. Check your own server the same way: .venv/bin/mcp-ref check -- python your_server.py
RUN_FAILED := Something is wrong: the example server broke the rules marked [fail] above (each names the spec requirement it broke).

test: $(STAMP)
	$(VENV)/bin/pytest -q

docs: $(STAMP)
	$(VENV)/bin/sphinx-build -q -W --keep-going -b html docs docs/_build/html
	@echo "docs/_build/html/index.html"

# what a user gets from `pip install mcp_ref[http]`: the package, its py.typed, and an app
# outside the checkout that type-checks against it (tests/examples/newcomer/weather.py)
CHECK := build/check-install
check-install:
	rm -rf $(CHECK) && $(PYTHON) -m venv $(CHECK)
	$(CHECK)/bin/python -m pip install --quiet '.[http]' mypy
	mkdir -p $(CHECK)/app && cp tests/examples/newcomer/weather.py $(CHECK)/app/
	cd $(CHECK)/app && ../bin/python -m mypy --strict --no-incremental weather.py
	cd $(CHECK)/app && ../bin/python -c 'import weather; print(sorted(weather.server.tools.names()))'

# the spec's prose and schemas of every revision and of the tasks extension, from the upstream
# repositories at pinned commits, and mcp_ref's catalogues of them (requirements.tsv, methods.tsv:
# tools/extract_requirements.py); standard library only, no .venv needed; the tests find it there
spec:
	$(PYTHON) tools/fetch_spec.py $(FETCH)

spec-coverage:
	@$(PYTHON) tools/manifest.py coverage $(if $(REVISION),--revision $(REVISION))

lint: $(STAMP)
	$(VENV)/bin/ruff check mcp_ref tests tools bench docs/examples
	$(VENV)/bin/ruff format --check mcp_ref tests tools bench docs/examples
	$(VENV)/bin/mypy mcp_ref docs/examples

bench: $(STAMP)
	$(PY) bench/run.py $(BENCH)

soak: $(STAMP)
	$(PY) bench/soak.py $(SOAK)

# Mutation testing of the requirement citations (tools/manifest.py mutate); MUTATE=... adds options,
# ID=... names the ids to mutate instead of the chapters, REVISION=... takes that revision's ids
# (all its implemented ones unless ID or MUTATE="--chapter ..." narrows them).
MUTATE_CHAPTERS := --chapter basic/utilities --chapter basic/lifecycle --chapter basic/transports

mutate: $(STAMP)
	$(PY) tools/manifest.py mutate $(if $(REVISION),--revision $(REVISION)) \
		$(if $(ID),$(ID),$(if $(REVISION),,$(MUTATE_CHAPTERS))) $(MUTATE)

# CI runs this right after make test (hence no baseline run), on its own 2 cores: 20 ids of
# 2025-11-25's chapters above, and 10 of the ids 2026-07-28 implements with code of its own
# (not same_as a 2025-11-25 one)
mutate-sample: $(STAMP)
	$(PY) tools/manifest.py mutate $(MUTATE_CHAPTERS) --sample 20 --seed 17 --jobs 2 --no-baseline $(MUTATE)
	$(PY) tools/manifest.py mutate --revision 2026-07-28 --own --sample 10 --seed 17 --jobs 2 --no-baseline $(MUTATE)

conformance: $(STAMP)
	PY=$(PY) tools/conformance.sh

clean:
	rm -rf $(VENV) build dist docs/_build *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
