#!/usr/bin/env bash
# run.sh — `make run`: bring up Postgres and Temporal, start `agentree dev`
# (worker + gateway) in the background, and run the research sample through
# the REST API, streaming it to the terminal. Leaves the services running
# for curl and the Temporal UI; `make down` stops everything.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
addr=${AGENTREE_GATEWAY_ADDR:-127.0.0.1:8080}

./scripts/services.sh up
eval "$(./scripts/services.sh env)"
echo "run: building bin/agentree" >&2
./scripts/services.sh progress "building bin/agentree" go build -o bin/agentree ./cmd/agentree

# healthy: the gateway accepts connections (bash's /dev/tcp: no curl needed).
healthy() { (exec 3<>"/dev/tcp/${addr%:*}/${addr##*:}") 2>/dev/null; }
# A dev left by an earlier `make run` may be an older build: replace it —
# but only once the address is known to be free or its own, so a taken
# address never costs the user a working dev.
mkdir -p .data
pidf=.data/dev.pid addrf=.data/dev.addr
ours=""
if [ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null; then ours=$(cat "$pidf"); fi
if healthy && { [ -z "$ours" ] || [ "$(cat "$addrf" 2>/dev/null || echo "$addr")" != "$addr" ]; }; then
	echo "run: $addr is taken by another process; set AGENTREE_GATEWAY_ADDR to a free address" >&2
	[ -n "$ours" ] && echo "run: (the agentree dev of an earlier make run keeps running on $(cat "$addrf" 2>/dev/null))" >&2
	exit 1
fi
if [ -n "$ours" ]; then
	kill "$ours" 2>/dev/null || true
	for _ in $(seq 1 100); do kill -0 "$ours" 2>/dev/null || break; sleep 0.1; done
	if healthy; then
		echo "run: $addr is still taken after stopping the earlier agentree dev" >&2
		exit 1
	fi
fi
echo "run: starting agentree dev on $addr (log: .data/dev.log)" >&2
nohup bin/agentree dev --addr "$addr" --key-file .data/dev-key >.data/dev.log 2>&1 </dev/null &
echo $! >"$pidf"
echo "$addr" >"$addrf"
for _ in $(seq 1 300); do
	healthy && break
	kill -0 "$(cat "$pidf")" 2>/dev/null || { cat .data/dev.log >&2; echo "run: agentree dev exited" >&2; exit 1; }
	sleep 0.2
done
healthy || { tail -20 .data/dev.log >&2; echo "run: the gateway did not answer within 60s" >&2; exit 1; }

status=0
bin/agentree run --addr "http://$addr" --org dev --key-file .data/dev-key --demo || status=$?

cat <<INFO

  REST API     http://$addr/api/orgs/dev/agent-executions
  OpenAPI      http://$addr/openapi.json
  Temporal UI  ${AGENTREE_TEMPORAL_UI:-http://127.0.0.1:${AGENTREE_TEMPORAL_UI_PORT:-8233}}
  API key      in .data/dev-key (0600; never printed, so it stays out of logs)
  Try          export AGENTREE_API_KEY=\$(cat .data/dev-key)
               curl -H "Authorization: Bearer \$AGENTREE_API_KEY" http://$addr/api/orgs/dev/agent-executions

  agentree dev keeps running (log .data/dev.log); \`make down\` stops it with Postgres and Temporal.
INFO
exit $status
