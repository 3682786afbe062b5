# cockpit — the two commands: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
TVENV := .venv-test
PIP_FLAGS ?= -q --disable-pip-version-check
INSTALLED := build/installed
LINTED := conftest.py cockpit screens plugins tests snapshots bench tools

.PHONY: demo test test-only lint installed-tree bench install-test-deps demo-bundle drills clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install $(PIP_FLAGS) --upgrade pip setuptools wheel
	$(VENV)/bin/pip install $(PIP_FLAGS) .
	touch $@

## demo: install into .venv and open the bundled demo incident
demo: $(VENV)/.installed
	$(VENV)/bin/cockpit --demo

$(TVENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(TVENV)
	$(TVENV)/bin/pip install $(PIP_FLAGS) --upgrade pip setuptools wheel
	$(TVENV)/bin/pip install $(PIP_FLAGS) -e '.[test]'
	touch $@

## install-test-deps: system packages the suite needs (Debian's prometheus for promtool, gcc)
install-test-deps:
	@sh tools/ensure-system-deps.sh

## installed-tree: the package as pip installs it, where screens/ and plugins/ are
## cockpit.screens and cockpit.plugins (what mypy and the import contracts check)
installed-tree: $(TVENV)/.installed
	rm -rf $(INSTALLED)
	$(TVENV)/bin/pip install $(PIP_FLAGS) --no-deps --no-build-isolation --target $(INSTALLED) .

## lint: ruff, mypy --strict over cockpit, screens and plugins, and the import contracts
lint: installed-tree
	$(TVENV)/bin/ruff check $(LINTED)
	$(TVENV)/bin/ruff format --check $(LINTED)
	cd $(INSTALLED) && $(CURDIR)/$(TVENV)/bin/mypy --config-file $(CURDIR)/pyproject.toml \
		--cache-dir $(CURDIR)/.mypy_cache/installed -p cockpit
	cd $(INSTALLED) && PYTHONPATH=. $(CURDIR)/$(TVENV)/bin/lint-imports $(CURDIR)/pyproject.toml

## test: lint, type-check and run the whole suite (real Prometheus, fake NVML, local API server)
test: install-test-deps lint
	$(TVENV)/bin/pytest -q -p no:cacheprovider

## test-only: the suite without lint
test-only: $(TVENV)/.installed
	$(TVENV)/bin/pytest -q -p no:cacheprovider

## bench: speed and memory targets, as ratios against baselines measured in the same run
bench: install-test-deps $(TVENV)/.installed
	$(TVENV)/bin/python bench/run.py

## demo-bundle: regenerate the demo evidence bundle from the scenario generator (real
## Prometheus, the suite's local Kubernetes API server and fake libnvidia-ml)
demo-bundle: install-test-deps $(TVENV)/.installed
	$(TVENV)/bin/python -m tools.build_bundles --demo

## drills: re-record every drill shipped in the package (bundle + answer key) from its
## scenario (real Prometheus, the suite's local Kubernetes API server, fake libnvidia-ml)
drills: install-test-deps $(TVENV)/.installed
	$(TVENV)/bin/python -m tools.build_bundles --drills

clean:
	rm -rf $(VENV) $(TVENV) build *.egg-info
