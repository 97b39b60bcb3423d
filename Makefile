# nginx-fleet: every developer and CI entry point. `make help` lists them.
SHELL := /bin/bash
PY := .venv/bin/python
UV ?= uv
export PATH := $(CURDIR)/.venv/bin:$(PATH)

.PHONY: help install install-python install-node build run demo check test test-backend test-agent \
        test-frontend test-e2e openapi migrations-regen bench clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

install-python: ## Python virtualenv (.venv) from uv.lock
	@command -v $(UV) >/dev/null || python3 -m pip install --quiet uv==0.13.8
	$(UV) sync --frozen

install-node: ## npm dependencies of frontend/ and e2e/
	cd frontend && npm ci --no-audit --no-fund
	cd e2e && npm ci --no-audit --no-fund

install: install-python install-node ## everything the project needs (Python and npm)

build: ## build the UI into frontend/dist
	cd frontend && npm run build

openapi: ## regenerate the UI's API client from the backend's OpenAPI document
	$(PY) -m app.cli openapi > frontend/openapi.json
	cd frontend && npm run gen:api

migrations-regen: ## regenerate migrations/versions/0001_initial.py from the models (pre-release only)
	rm -f migrations/versions/0001_initial.py
	dropdb --if-exists -h 127.0.0.1 -U postgres nf_migrate && createdb -h 127.0.0.1 -U postgres nf_migrate
	DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/nf_migrate .venv/bin/alembic revision --autogenerate --rev-id 0001 -m initial
	dropdb -h 127.0.0.1 -U postgres nf_migrate
