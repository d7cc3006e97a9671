# zhisuan.ops — the two commands a new user needs:  make demo   and   make test
SHELL := /bin/bash
.DEFAULT_GOAL := help
PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
COLL := collections/ansible_collections/zhisuan/ops
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
export PATH := $(BIN):$(PATH)
ANSIBLE_TEST_PIP := 24_2

.PHONY: help sysdeps venv lab lab-down demo pdf test unit nodepy fuzz lint sanity integration compat compat-smoke molecule docs-check release bench clean

help:
	@echo "make demo   - set up, start the simulated 8-node lab, run the acceptance playbook, print the summary"
	@echo "make pdf    - print the latest run's report as report.pdf, the copy a customer signs (RUN=<run dir>)"
	@echo "make test   - everything the project tests (unit, lint, sanity, integration on the lab, docs)"
	@echo "make compat - the controller on ansible-core 2.16, 2.17 and 2.18 (make test runs its 2.16 smoke part)"
	@echo "make fuzz   - the property-based fuzz suite with a long budget (FUZZ_EXAMPLES=2000)"
	@echo "make release - the Galaxy tarball with roles, playbooks and the changelog (build/release/)"
	@echo "make bench  - benchmarks (bench/README.md)"

# System programs the tests and the lab use (tests/sysdeps.sh lists them): installed from apt when missing.
sysdeps:
	@bash tests/sysdeps.sh

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -U pip
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev]'
	touch $@

venv: $(VENV)/.installed

lab: venv
	$(BIN)/python lab/labctl.py up

lab-down: venv
	$(BIN)/python lab/labctl.py down

demo: lab
	$(BIN)/ansible-playbook playbooks/acceptance.yml
	@echo
	@echo "== per-node summary =="
	@cat reports/out/latest/summary.txt
	@echo
	@echo "Report: $$(readlink -f reports/out/latest)/report.html  (also report.md, junit.xml, report.json, results.json)"

# The signed copy (docs/report.md "Making the signed PDF"): re-render a run's report (RUN=reports/out/<run id>,
# default the latest; LANGUAGE=zh_CN for the Chinese one) and print report.html to report.pdf with headless Chromium.
RUN ?= reports/out/latest
LANGUAGE ?= en
pdf: venv
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || bash tests/sysdeps.sh
	$(BIN)/ansible-playbook playbooks/report.yml -e report_src=$(RUN)/results.json -e report_pdf=true \
	  -e report_language=$(LANGUAGE)

# The fuzz tests run inside `unit` with a small fixed budget (tests/unit/fuzzing.py); `make fuzz` searches longer.
unit: venv nodepy
	$(BIN)/python -m pytest -q tests/unit

# The node-side code (modules and the module_utils they ship) keeps to Python 3.6 (README "On your cluster"): a
# static check of every node-side file (the gate, needs no other Python), a compile by each python3.6..3.13 found
# (PATH or pyenv), and the node-side parser tests under python3.6 and python3.8 in venvs of their own (.nodepy/,
# pytest from PyPI). A Python not found is named and left out; the static check always runs.
nodepy: venv
	$(BIN)/python tests/node_python.py static compile tests

FUZZ_EXAMPLES ?= 2000
fuzz: venv
	ZHISUAN_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m pytest -q -m fuzz tests/unit

lint: venv
	$(BIN)/ansible-lint --profile production --strict

# ansible-test sanity in its own venv. get-pip.py cannot be downloaded here: a stand-in that bootstraps pip from
# ensurepip is put where ansible-test looks first.
sanity: venv
	install -D -m 0644 tests/sanity/get_pip_bootstrap.py $(HOME)/.ansible/test/cache/get_pip_$(ANSIBLE_TEST_PIP).py
	cd $(COLL) && $(BIN)/ansible-test sanity --venv --python 3.11 --color no

integration: venv
	$(BIN)/python -m pytest -q tests/integration

# The controller on ansible-core 2.16, 2.17 and 2.18 (2.19 is the project's own venv): a venv per line under
# .compat/<line>/ built from PyPI (cached, rebuilt when pyproject.toml changes), the controller-side unit tests in
# each, and playbooks on the lab whose results.json must equal 2.19's check by check (tests/compat/compat.py).
compat: sysdeps venv
	$(BIN)/python tests/compat/compat.py

# The part of make compat that make test runs (make compat takes ~20 minutes and does not pass on every line yet,
# docs/compat.md): the oldest line, 2.16, runs the acceptance as in make demo and the zh_CN re-render.
compat-smoke: sysdeps venv
	$(BIN)/python tests/compat/compat.py --line 2.16 --only acceptance,report --skip-unit

MOLECULE_SCENARIOS := default report delivery remediation
molecule: venv
	@for s in $(MOLECULE_SCENARIOS); do $(BIN)/molecule test -s $$s || exit 1; done

docs-check: venv
	@for m in $$(cd $(COLL)/plugins/modules && ls *.py | sed 's/\.py$$//'); do \
	  out=$$(ANSIBLE_NOCOLOR=1 $(BIN)/ansible-doc -t module zhisuan.ops.$$m) || exit 1; \
	  for section in '^EXAMPLES:' '^RETURN VALUES:' '^OPTIONS'; do \
	    grep -q "$$section" <<<"$$out" || { echo "zhisuan.ops.$$m: no $$section in ansible-doc"; exit 1; }; \
	  done; \
	done; echo "ansible-doc: every module documented (OPTIONS, EXAMPLES, RETURN)"

# The collection as Galaxy ships it: roles, playbooks and CHANGELOG.rst (from the fragments) in one tarball under
# build/release/; tests/integration/test_release.py installs it and runs its playbook on the lab (make test).
release: venv
	$(BIN)/python tools/release.py --out build/release

test: sysdeps venv unit lint sanity integration compat-smoke molecule docs-check
	@echo "make test: all passed"

bench: sysdeps venv
	$(BIN)/python bench/run.py
	$(BIN)/python bench/report_scale.py
	$(BIN)/python bench/pairs.py --nodes 16 --pair-seconds 60

clean:
	rm -rf $(VENV) .nodepy .compat reports/out lab/run bench/out build $(COLL)/tests/output
