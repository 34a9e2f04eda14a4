# Agentree — see README.md. Every target works on a fresh clone: what a
# target needs (PostgreSQL cluster, Temporal dev server, tools) it brings up.
SHELL := /bin/bash
GO ?= go
SERVICES := ./scripts/services.sh

.PHONY: up down env test run bench chaos soak generate build lint

## up: start local PostgreSQL and the Temporal dev server (idempotent), migrate.
up:
	@$(SERVICES) up

## down: stop what `make up` started.
down:
	@$(SERVICES) down

## env: print export lines for DATABASE_URL and TEMPORAL_ADDRESS (eval "$$(make -s env)").
env:
	@$(SERVICES) env

build:
	$(GO) build ./...

## test: the whole suite, with the race detector, against real services.
test: up
	@$(SERVICES) temporal-bin >/dev/null
	@$(SERVICES) chromium
	@$(SERVICES) node-harness
	@echo "test: compiling, then each package's result as it finishes (the first build takes minutes)" >&2
	@eval "$$($(SERVICES) env)" && $(SERVICES) progress "testing" $(GO) test -race -count=1 -timeout 45m ./...

## run: the main job — a sample agent streamed to the terminal.
run:
	@./scripts/run.sh

## bench: side-by-side benchmark of Agentree and the naive pattern.
bench: up
	@eval "$$($(SERVICES) env)" && $(GO) run ./tools/bench

## chaos: the fault-injection suite (issue 19) on private Postgres and Temporal
## processes it kills and restarts; flags in CHAOS_FLAGS (go run ./tools/chaos -h).
chaos:
	@$(SERVICES) temporal-bin >/dev/null
	@$(GO) run ./tools/chaos $(CHAOS_FLAGS)

## soak: the chaos load kept steady for 10 minutes with a fault every 90 s,
## sampled every minute (issue 42); flags in SOAK_FLAGS (-soak-duration, …).
soak:
	@$(SERVICES) temporal-bin >/dev/null
	@$(GO) run ./tools/chaos -soak $(SOAK_FLAGS)

## generate: regenerate protobuf, gateway and OpenAPI code.
generate:
	@./scripts/gen.sh
