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
PY_DIRS := backend agent demo bench
TEST_DATABASE_URL ?= postgresql+psycopg://postgres@127.0.0.1:5432/test
TEST_SUITES ?= test-backend test-agent test-demo test-bench test-frontend test-e2e

.PHONY: help install install-python install-node build run demo check check-python check-frontend \
        check-migrations test test-backend test-fuzz test-agent test-demo test-bench test-frontend test-e2e openapi \
        migrations-regen bench clean

help: ## list targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

install-python: ## Python virtualenv (.venv) from uv.lock
	@command -v $(UV) >/dev/null || python3 -m pip install --quiet uv==0.13.8
	$(UV) sync --frozen

# `npm ci` refuses a lock file that lacks other platforms' optional packages (rollup's native
# builds for android, darwin, ...): the registry this machine reaches does not carry them, so no
# lock made here can list them. `npm install --no-save` then installs the locked versions
# without rewriting the lock.
define npm_install
	cd $(1) && { npm ci --no-audit --no-fund || { \
	  echo "$(1): npm ci refused the lock file; installing the locked versions instead" >&2; \
	  npm install --no-save --no-audit --no-fund; }; }
endef

install-node: ## npm dependencies of frontend/ and e2e/
	$(call npm_install,frontend)
	$(call npm_install,e2e)

install: install-python install-node ## everything the project needs (Python and npm)

build: ## build the UI into frontend/dist
	cd frontend && npm run build

run: build ## embedded control plane with the built UI on $(HOST):$(PORT) (data in ./var)
	.venv/bin/nginx-fleet run --host $(HOST) --port $(PORT)

demo: install build ## dashboard + three real nginx instances with agents and traffic
	$(PY) demo/run_demo.py --port $(PORT) $(DEMO_ARGS)

check: check-python check-frontend check-migrations ## everything CI checks besides the tests

check-python: ## ruff (lint and format) and mypy
	.venv/bin/ruff check $(PY_DIRS)
	.venv/bin/ruff format --check $(PY_DIRS)
	.venv/bin/mypy backend/app agent/nginx_fleet_agent

check-frontend: ## TypeScript and ESLint of the UI, TypeScript of the e2e journeys
	cd frontend && npm run typecheck && npm run lint
	cd e2e && npm run typecheck

# Migrations must produce exactly the models: upgrade a scratch database, then `alembic check`.
check-migrations: ## alembic check against a scratch PostgreSQL database
	@url='$(TEST_DATABASE_URL)'; libpq="$${url/+psycopg/}"; server="$${libpq%/*}"; \
	db="nf_alembic_check_$$$$"; \
	psql -qX "$$libpq" -c "CREATE DATABASE $$db" >/dev/null; \
	trap 'psql -qX "$$libpq" -c "DROP DATABASE IF EXISTS $$db WITH (FORCE)" >/dev/null' EXIT; \
	DATABASE_URL="$$server/$$db" .venv/bin/alembic upgrade head; \
	DATABASE_URL="$$server/$$db" .venv/bin/alembic check

# Each suite runs even when an earlier one failed; `make test` fails if any of them did.
test: ## every test suite (backend, agent, demo, bench harness, frontend, end-to-end; or TEST_SUITES="...")
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

test-frontend: ## vitest of the UI
	cd frontend && npm test

test-e2e: build ## Playwright journeys against the running demo (headless Chromium)
	cd e2e && npm test

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
	$(PY) bench/series.py $(BENCH_ARGS)
	$(PY) bench/agent_cost.py $(BENCH_ARGS)

clean: ## remove build output, local data and caches (not .venv or node_modules)
	rm -rf frontend/dist var e2e/test-results e2e/playwright-report e2e/.auth bench/out \
	       .mypy_cache .ruff_cache .pytest_cache
