# temporal-server.sh — sourced by services.sh: AGENTREE_TEMPORAL=server,
# the Temporal server itself (go.temporal.io/server, the version the CLI
# embeds) on the PostgreSQL cluster services.sh runs, its schema set up by
# the server's own SQL tool. Functions only; they use services.sh's
# variables (root, data, PG_PORT, TEMPORAL_PORT, server_dir, ...).

temporal_server_build() {
	local stamp="$root/bin/.temporal-server-version"
	if [ -x "$server_bin" ] && [ -x "$sql_tool_bin" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$TEMPORAL_SERVER_VERSION" ]; then return; fi
	log "building the Temporal server $TEMPORAL_SERVER_VERSION and its SQL tool into bin/ (a cold build takes minutes)"
	mkdir -p "$root/bin"
	# go install names the binaries after their directories (server, sql):
	# they are built into a private directory and renamed into bin/, so a
	# concurrent `make up` never runs a half-written binary.
	local tmp; tmp=$(mktemp -d "$root/bin/.temporal-server-build.XXXXXX")
	GOFLAGS=-mod=mod GOBIN="$tmp" progress "building the Temporal server" \
		go install "go.temporal.io/server/cmd/server@$TEMPORAL_SERVER_VERSION" \
		"go.temporal.io/server/cmd/tools/sql@$TEMPORAL_SERVER_VERSION" ||
		{ rm -rf "$tmp"; log "building the Temporal server failed"; exit 1; }
	mv "$tmp/server" "$server_bin"
	mv "$tmp/sql" "$sql_tool_bin"
	rmdir "$tmp"
	echo "$TEMPORAL_SERVER_VERSION" >"$stamp"
}

# server_port is the server's port TEMPORAL_PORT+$1: the frontend's gRPC
# port is TEMPORAL_PORT and the others (its membership and HTTP ports,
# then history's, matching's and worker's gRPC and membership ports) follow
# it, so two servers' TEMPORAL_PORTs must be at least 9 apart. The server
# records membership ports in a smallint column: all must stay below 32768.
server_port() { echo $((TEMPORAL_PORT + $1)); }

# pg_sql runs SQL on the cluster over TCP as agentree (initdb's trust
# authentication), which reaches any cluster on PG_PORT.
pg_sql() { psql -h 127.0.0.1 -p "$PG_PORT" -U agentree -d postgres -v ON_ERROR_STOP=1 -Atqc "$1"; }

# sql_tool runs the server's SQL tool on database $1.
sql_tool() {
	local db=$1; shift
	"$sql_tool_bin" --plugin postgres12 --endpoint 127.0.0.1 --port "$PG_PORT" --user agentree --database "$db" "$@"
}

# temporal_server_schema creates the server's two databases and brings
# their schemas to this version's, with the SQL files built into the tool.
# Every step is idempotent: an existing schema is only updated.
temporal_server_schema() {
	local db schema out=$server_dir/schema.log
	: >"$out"
	for db in temporal temporal_visibility; do
		[ "$(pg_sql "SELECT 1 FROM pg_database WHERE datname = '$db'")" = 1 ] || pg_sql "CREATE DATABASE $db" >>"$out" 2>&1 ||
			{ tail -5 "$out" >&2; log "creating database $db failed"; exit 1; }
		schema=temporal
		[ "$db" = temporal_visibility ] && schema=visibility
		{ sql_tool "$db" setup-schema -v 0.0 && sql_tool "$db" update-schema --schema-name "postgresql/v12/$schema"; } >>"$out" 2>&1 ||
			{ tail -20 "$out" >&2; log "setting up the schema of $db failed (log $out)"; exit 1; }
	done
}

# temporal_server_config writes the server's configuration (agentree.yaml,
# read with --env agentree) and its dynamic configuration.
temporal_server_config() {
	local kv
	: >"$server_dir/dynamicconfig.yaml"
	for kv in "${temporal_dynamic_config[@]}"; do
		printf '%s:\n  - value: %s\n' "${kv%%=*}" "${kv#*=}" >>"$server_dir/dynamicconfig.yaml"
	done
	store() { # name database maxConns
		cat <<YAML
    $1:
      sql:
        pluginName: postgres12
        databaseName: $2
        connectAddr: 127.0.0.1:$PG_PORT
        connectProtocol: tcp
        user: agentree
        maxConns: $3
        maxIdleConns: $3
        maxConnLifetime: 1h
YAML
	}
	rpc() { # service grpc-port membership-port
		printf '  %s:\n    rpc:\n      grpcPort: %s\n      membershipPort: %s\n      bindOnLocalHost: true\n' "$1" "$2" "$3"
	}
	{
		cat <<YAML
# Written by scripts/services.sh at every \`make up\`: edit it there.
log:
  stdout: true
  level: warn
persistence:
  defaultStore: default
  visibilityStore: visibility
  # A history shard owns a slice of the workflow IDs and serialises their
  # writes; shards are the unit of the history service's parallelism, and
  # the count is fixed when the cluster is first set up (another count
  # needs new databases). Four keep two cores busy without the per-shard
  # overhead (queues, timers, polls) of the hundreds production runs; the
  # dev server runs one.
  numHistoryShards: 4
  datastores:
YAML
		store default temporal 20
		store visibility temporal_visibility 10
		cat <<YAML
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
services:
YAML
		rpc frontend "$TEMPORAL_PORT" "$(server_port 1)"
		printf '      httpPort: %s\n' "$(server_port 2)"
		rpc history "$(server_port 3)" "$(server_port 4)"
		rpc matching "$(server_port 5)" "$(server_port 6)"
		rpc worker "$(server_port 7)" "$(server_port 8)"
		cat <<YAML
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: 127.0.0.1:$TEMPORAL_PORT
dcRedirectionPolicy:
  policy: noop
archival:
  history:
    state: disabled
  visibility:
    state: disabled
namespaceDefaults:
  archival:
    history:
      state: disabled
    visibility:
      state: disabled
dynamicConfigClient:
  filepath: $server_dir/dynamicconfig.yaml
  pollInterval: 10s
YAML
	} >"$server_dir/agentree.yaml"
}

# temporal_server_prepare checks the ports, sets up the databases and
# writes the configuration; `services.sh temporal-server-prepare` runs it
# for a supervisor of its own (tools/chaos).
temporal_server_prepare() {
	if [ -n "${DATABASE_URL:-}" ]; then
		log "AGENTREE_TEMPORAL=server keeps Temporal's databases in the local cluster: unset DATABASE_URL"; exit 1
	fi
	if [ "$(server_port 8)" -gt 32767 ]; then
		log "AGENTREE_TEMPORAL_PORT=$TEMPORAL_PORT: the server uses it and the 8 ports after it, which must be below 32768"; exit 1
	fi
	mkdir -p "$server_dir"
	temporal_server_schema
	temporal_server_config
}

# temporal_server_cmd is the command line that starts the server on what
# temporal_server_prepare made.
temporal_server_cmd() {
	printf '%s\n' "$server_bin" --root "$server_dir" --config . --env agentree --allow-no-auth start
}

temporal_server_start() {
	temporal_server_prepare
	log "starting the Temporal server $TEMPORAL_SERVER_VERSION on 127.0.0.1:$TEMPORAL_PORT (PostgreSQL 127.0.0.1:$PG_PORT, no UI)"
	local cmd; mapfile -t cmd < <(temporal_server_cmd)
	nohup "${cmd[@]}" >"$server_dir/server.log" 2>&1 </dev/null &
	echo $! >"$data/temporal.pid"
}

# temporal_server_namespace registers the default namespace and the search
# attributes (the dev server makes both itself), then waits until the
# frontend serves them: it learns of a namespace by polling the database.
temporal_server_namespace() {
	local addr start=$SECONDS; addr=$(temporal_address)
	local tctl=("$temporal_bin" operator --address "$addr")
	if ! "${tctl[@]}" namespace describe --namespace default >/dev/null 2>&1; then
		log "registering the default namespace and Agentree's search attributes"
		"${tctl[@]}" namespace create --namespace default --retention 72h >/dev/null ||
			{ log "creating the default namespace failed"; exit 1; }
	fi
	local i name listed missing=()
	for i in $(seq 1 300); do
		listed=$("${tctl[@]}" search-attribute list --namespace default 2>/dev/null) && break
		sleep 0.2
	done
	for name in "${search_attributes[@]}"; do
		grep -qw "$name" <<<"$listed" || missing+=(--name "$name" --type Keyword)
	done
	if [ ${#missing[@]} -gt 0 ]; then
		"${tctl[@]}" search-attribute create --namespace default "${missing[@]}" >/dev/null ||
			{ log "registering the search attributes failed"; exit 1; }
	fi
	for i in $(seq 1 300); do
		listed=$("${tctl[@]}" search-attribute list --namespace default 2>/dev/null) || listed=
		missing=()
		for name in "${search_attributes[@]}"; do grep -qw "$name" <<<"$listed" || missing+=("$name"); done
		if [ ${#missing[@]} -eq 0 ] && "$temporal_bin" workflow list --address "$addr" --namespace default --limit 1 >/dev/null 2>&1; then
			log "the default namespace and its search attributes are usable after $((SECONDS - start))s"
			return
		fi
		sleep 0.2
	done
	log "the default namespace or its search attributes (${missing[*]}) never became usable"; exit 1
}
