# nginx-fleet: every developer and CI entry point. `make help` lists them.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PY := .venv/bin/python
UV ?= uv
export PATH := $(CURDIR)/.venv/bin:$(PATH)

HOST ?= 127.0.0.1
PORT ?= 8800
DEMO_ARGS ?=
BENCH_ARGS ?=
PY_DIRS := analyzer backend agent demo bench scripts deploy
TEST_DATABASE_URL ?= postgresql+psycopg://postgres@127.0.0.1:5432/test
TEST_SUITES ?= test-analyzer test-backend test-agent test-demo test-bench test-scripts test-frontend test-e2e

.PHONY: help install install-python install-node system-demo system-test build agent-wheel run demo check check-python check-frontend \
        check-migrations check-licences test test-compose test-analyzer test-backend test-fuzz test-agent test-demo test-bench test-scripts test-frontend test-e2e openapi \
        migrations-regen bench clean

help: ## list targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

# Each install step is redone only when its lock file (or manifest) is newer than its stamp.
install-python: .venv/.installed ## Python virtualenv (.venv) from uv.lock

.venv/.installed: uv.lock pyproject.toml backend/pyproject.toml agent/pyproject.toml
	@command -v $(UV) >/dev/null || python3 -m pip install --quiet uv==0.13.8 || { \
	  echo "uv is missing and pip could not install it; run: pipx install uv==0.13.8" >&2; exit 1; }
	$(UV) sync --frozen
	touch $@

# `npm ci` refuses a lock file that lacks other platforms' optional packages (rollup's native
# builds for android, darwin, ...): the registry this machine reaches does not carry them, so no
# lock made here can list them. `npm install --no-save` then installs the locked versions
# without rewriting the lock.
define npm_install
	cd $(1) && { npm ci --no-audit --no-fund || { \
	  echo "$(1): npm ci refused the lock file; installing the locked versions instead" >&2; \
	  npm install --no-save --no-audit --no-fund; }; }
endef

install-node: frontend/node_modules/.installed e2e/node_modules/.installed ## npm dependencies of frontend/ and e2e/

%/node_modules/.installed: %/package-lock.json %/package.json
	$(call npm_install,$*)
	touch $@

install: install-python install-node ## everything the project needs (Python and npm)

# Debian packages each entry point needs; scripts/system-deps.sh installs the missing ones as
# root or through passwordless sudo, else stops at once with the one command to run.
DEMO_PACKAGES := nginx
# Debian builds these nginx modules as separate packages; the analyzer's suites check its
# directive table and the precision configs against them with the real `nginx -t`.
NGINX_MODULE_PACKAGES := libnginx-mod-stream libnginx-mod-mail libnginx-mod-http-geoip geoip-database \
  libnginx-mod-http-image-filter libnginx-mod-http-xslt-filter libnginx-mod-http-headers-more-filter \
  libnginx-mod-http-ndk libnginx-mod-http-lua libnginx-mod-http-echo libnginx-mod-rtmp
SUITE_PACKAGES_test-analyzer := nginx $(NGINX_MODULE_PACKAGES)
SUITE_PACKAGES_test-agent := nginx
SUITE_PACKAGES_test-demo := nginx
SUITE_PACKAGES_test-bench := nginx wrk
SUITE_PACKAGES_test-e2e := nginx chromium
SUITE_SERVICES := test-backend test-bench
TEST_PACKAGES = $(sort $(foreach suite,$(TEST_SUITES),$(SUITE_PACKAGES_$(suite))))

system-demo: ## system packages the demo needs (nginx)
	scripts/system-deps.sh packages $(DEMO_PACKAGES)

system-test: ## system packages of TEST_SUITES; local PostgreSQL and Redis started when down
	$(if $(TEST_PACKAGES),scripts/system-deps.sh packages $(TEST_PACKAGES))
	$(if $(filter $(SUITE_SERVICES),$(TEST_SUITES)),scripts/system-deps.sh services)

build: install-node agent-wheel ## build the UI into frontend/dist and the agent wheel into agent/dist
	cd frontend && npm run build

# The wheel the control plane serves at /downloads/ for the enrolment page's install command.
agent-wheel: install-python ## build the agent's wheel into agent/dist (NGINX_FLEET_DOWNLOADS_DIR)
	rm -rf agent/dist
	$(UV) build --quiet --wheel --package nginx-fleet-agent --out-dir agent/dist

run: build ## embedded control plane with the built UI on $(HOST):$(PORT) (data in ./var)
	.venv/bin/nginx-fleet run --host $(HOST) --port $(PORT)

demo: system-demo install build ## dashboard + four real nginx instances with agents and traffic
	$(PY) demo/run_demo.py --port $(PORT) $(DEMO_ARGS)

check: check-python check-frontend check-migrations check-licences ## everything CI checks besides the tests

check-python: ## ruff (lint and format), mypy and the import layering (import-linter)
	.venv/bin/ruff check $(PY_DIRS)
	.venv/bin/ruff format --check $(PY_DIRS)
	.venv/bin/mypy analyzer/nginx_fleet_analyzer backend/app agent/nginx_fleet_agent
	.venv/bin/lint-imports --no-cache

check-frontend: ## TypeScript and ESLint of the UI, TypeScript of the e2e journeys
	cd frontend && npm run typecheck && npm run lint
	cd e2e && npm run typecheck

check-licences: ## every installed Python and npm dependency is under a licence compatible with Apache-2.0
	$(PY) scripts/check_licences.py

# Migrations must produce exactly the models: upgrade a scratch database, then `alembic check`.
check-migrations: ## alembic check against a scratch PostgreSQL database
	@url='$(TEST_DATABASE_URL)'; libpq="$${url/+psycopg/}"; server="$${libpq%/*}"; \
	db="nf_alembic_check_$$$$"; \
	psql -qX "$$libpq" -c "CREATE DATABASE $$db" >/dev/null; \
	trap 'psql -qX "$$libpq" -c "DROP DATABASE IF EXISTS $$db WITH (FORCE)" >/dev/null' EXIT; \
	DATABASE_URL="$$server/$$db" .venv/bin/alembic upgrade head; \
	DATABASE_URL="$$server/$$db" .venv/bin/alembic check

# Each suite runs even when an earlier one failed; `make test` fails if any of them did.
test: system-test install ## every test suite (backend, agent, demo, bench harness, frontend, end-to-end; or TEST_SUITES="...")
	@failed=(); \
	for suite in $(TEST_SUITES); do \
	  $(MAKE) --no-print-directory $$suite || failed+=("$$suite"); \
	done; \
	if (( $${#failed[@]} )); then echo "FAILED: $${failed[*]}" >&2; exit 1; fi; \
	echo "all test suites passed"

# pytest exits 5 when it collects nothing; these suites exist, so an empty run is a failure.
define pytest_suite
	.venv/bin/pytest $(1) -q -p no:cacheprovider || { \
	  code=$$?; [ $$code -ne 5 ] || echo "$(1): pytest collected no tests" >&2; exit $$code; }
endef

test-analyzer: ## pytest analyzer/tests (the config engine; pure, no services)
	$(call pytest_suite,analyzer/tests)

test-backend: ## pytest backend/tests (real PostgreSQL and Redis)
	$(call pytest_suite,backend/tests)

# Part of test-backend; this target runs it alone.
test-fuzz: ## schemathesis over every API operation as an admin (real PostgreSQL; in test-backend)
	$(call pytest_suite,backend/tests/fuzz)

test-agent: ## pytest agent/tests (real nginx)
	$(call pytest_suite,agent/tests)

test-demo: ## pytest demo/tests (templates against the real nginx, traffic limits)
	$(call pytest_suite,demo/tests)

test-bench: ## pytest bench/tests (harness checks and short runs of every benchmark; needs wrk)
	$(call pytest_suite,bench/tests)

test-scripts: ## pytest scripts/tests (licence check, system set-up)
	$(call pytest_suite,scripts/tests)

test-frontend: ## vitest of the UI
	cd frontend && npm test

test-e2e: build ## Playwright journeys against the running demo (headless Chromium)
	cd e2e && npm test

# Not part of `make test`: it builds images and needs a Docker engine (installed and started by
# scripts/compose/docker-engine.sh as root). .ci/run runs it after `make test`.
test-compose: install-python ## docker-compose.yml built and run for real on local Debian-made images (docs/deployment.md)
	scripts/compose/docker-engine.sh
	scripts/compose/local-images.sh
	$(call pytest_suite,deploy/tests)

openapi: ## regenerate the UI's API client from the backend's OpenAPI document
	$(PY) -m app.cli openapi > frontend/openapi.json
	cd frontend && npm run gen:api

migrations-regen: ## regenerate migrations/versions/0001_initial.py from the models (pre-release only)
	rm -f migrations/versions/0001_initial.py
	dropdb --if-exists -h 127.0.0.1 -U postgres nf_migrate && createdb -h 127.0.0.1 -U postgres nf_migrate
	DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/nf_migrate .venv/bin/alembic revision --autogenerate --rev-id 0001 -m initial
	dropdb -h 127.0.0.1 -U postgres nf_migrate

bench: ## run the benchmarks in bench/ (BENCH_ARGS=--quick for a short run; see bench/README.md)
	$(PY) bench/ingest.py $(BENCH_ARGS)
	$(PY) bench/ingest_parts.py $(BENCH_ARGS)
	$(PY) bench/series.py $(BENCH_ARGS)
	$(PY) bench/agent_cost.py $(BENCH_ARGS)
	$(PY) bench/access_log.py $(BENCH_ARGS)
	$(PY) bench/alerts_eval.py $(BENCH_ARGS)
	$(PY) bench/storage.py $(BENCH_ARGS)
	$(PY) bench/retention.py $(BENCH_ARGS)
	$(PY) bench/fleet_api.py $(BENCH_ARGS)
	$(PY) bench/live_events.py $(BENCH_ARGS)
	$(PY) bench/analysis_queue.py $(BENCH_ARGS)
	$(PY) bench/fleet_scale.py $(BENCH_ARGS)

clean: ## remove build output, local data and caches (not .venv or node_modules)
	rm -rf frontend/dist agent/dist var e2e/test-results e2e/playwright-report e2e/.auth bench/out \
	       .mypy_cache .ruff_cache .pytest_cache

print-%: ## print a make variable (e.g. make -s print-NGINX_MODULE_PACKAGES), for .ci/run
	@echo $($*)
