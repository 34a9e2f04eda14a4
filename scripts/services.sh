#!/usr/bin/env bash
# services.sh up|down|env|status — the local PostgreSQL cluster and Temporal
# server that `make up`, `make test` and `make run` use: the Temporal dev
# server (SQLite), or with AGENTREE_TEMPORAL=server the Temporal server
# itself on PostgreSQL, as users run it.
#
# With DATABASE_URL or TEMPORAL_ADDRESS set, that service is taken as given
# and nothing is started for it. Data lives under .data/ (git-ignored;
# AGENTREE_DATA moves it, so a test or a second checkout's services never
# touch these). As
# root, PostgreSQL runs as the `postgres` user; when that user cannot reach
# .data/ (a clone under /root, say) the cluster lives in a private directory
# under /tmp instead, named after this checkout.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
data=${AGENTREE_DATA:-$root/.data}
PG_PORT=${AGENTREE_PG_PORT:-54329}
TEMPORAL_PORT=${AGENTREE_TEMPORAL_PORT:-7233}
TEMPORAL_UI_PORT=${AGENTREE_TEMPORAL_UI_PORT:-8233}
TEMPORAL_VERSION=v1.5.1
temporal_bin="$root/bin/temporal"
# AGENTREE_TEMPORAL picks the Temporal `up` starts: dev (the CLI's dev
# server) or server (the Temporal server on this PostgreSQL cluster).
TEMPORAL_MODE=${AGENTREE_TEMPORAL:-dev}
case "$TEMPORAL_MODE" in dev | server) ;; *) echo "services: AGENTREE_TEMPORAL=$TEMPORAL_MODE: want dev or server" >&2; exit 2;; esac
# The server version the CLI above embeds: one server for both modes. (The
# builds share little: go install resolves each module's own requirements.)
TEMPORAL_SERVER_VERSION=v1.29.1
server_bin="$root/bin/temporal-server"
sql_tool_bin="$root/bin/temporal-sql-tool"
server_dir="$data/temporal-server"

# The dynamic configuration both servers get. Eager activity dispatch and
# a single task-queue partition take the matching round trips out of every
# model and tool call. The server delays the first task of a run
# continued-as-new within workflowIdReuseMinimalInterval (1 s) of its
# predecessor's start; with fast scripted models that throttle, not
# Agentree, would set the pace.
temporal_dynamic_config=(
	system.enableActivityEagerExecution=true
	matching.numTaskqueueReadPartitions=1
	matching.numTaskqueueWritePartitions=1
	'history.workflowIdReuseMinimalInterval="0s"'
)
# The search attributes every agent workflow carries (adapter/client/search.go),
# all Keyword.
search_attributes=(AgentreeOrg AgentreeKind AgentreeStatus AgentreeDefinition)
# The server mode's functions (temporal_server_*).
# shellcheck source=temporal-server.sh
. "$root/scripts/temporal-server.sh"

log() { printf 'services: %s\n' "$*" >&2; }

# Test seams for the PostgreSQL install (scripts/services_test.go): where
# Debian keeps the server binaries, the apt-get to run and the os-release
# file that says which distribution this is.
pg_libdir=${AGENTREE_PG_LIBDIR:-/usr/lib/postgresql}
apt_get=${AGENTREE_APT_GET:-apt-get}
os_release=${AGENTREE_OS_RELEASE:-/etc/os-release}

# progress runs a long command and says every 30 s that it is still at
# it, so a first build never looks hung.
progress() {
	local what=$1; shift
	"$@" &
	local pid=$! start=$SECONDS
	while ! wait_for "$pid" 30; do
		log "still $what ($((SECONDS - start))s)"
	done
	wait "$pid"
}

# wait_for waits up to $2 seconds for process $1 to end; false if it runs on.
wait_for() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}

# pg_bins puts the PostgreSQL server binaries on PATH: Debian installs them
# under /usr/lib/postgresql/<version>/bin, which is not on PATH; the newest
# version wins.
pg_bins() {
	command -v initdb >/dev/null && return
	local d
	for d in $(ls -d "$pg_libdir"/*/bin 2>/dev/null | sort -V -r); do
		if [ -x "$d/initdb" ]; then PATH="$d:$PATH"; export PATH; return; fi
	done
	return 1
}

# sandbox_install gives the bash tool its strongest isolation (bubblewrap:
# no network, own process namespace, read-only host) on Debian as root;
# elsewhere the tool degrades to unshare or none and says so.
sandbox_install() {
	command -v bwrap >/dev/null 2>&1 && return
	if is_debian && [ "$(id -u)" = 0 ]; then
		log "installing bubblewrap for the bash tool's sandbox: apt-get install -y bubblewrap"
		DEBIAN_FRONTEND=noninteractive "$apt_get" install -y -q bubblewrap >&2 ||
			{ DEBIAN_FRONTEND=noninteractive "$apt_get" update -q >&2 &&
				DEBIAN_FRONTEND=noninteractive "$apt_get" install -y -q bubblewrap >&2; } ||
			log "apt-get install bubblewrap failed; bash falls back to unshare"
	fi
}

is_debian() { grep -qiE '^(ID|ID_LIKE)=.*(debian|ubuntu)' "$os_release" 2>/dev/null; }

# pg_install makes sure the server binaries exist: installed with apt-get
# on Debian/Ubuntu as root, else it says the one command to run.
pg_install() {
	pg_bins && return
	if is_debian && [ "$(id -u)" = 0 ]; then
		log "PostgreSQL server binaries not found; installing them: apt-get install -y postgresql"
		DEBIAN_FRONTEND=noninteractive "$apt_get" update -q >&2 &&
			DEBIAN_FRONTEND=noninteractive "$apt_get" install -y -q postgresql >&2 ||
			{ log "apt-get install postgresql failed (see above)"; exit 1; }
		pg_bins && return
		log "postgresql is installed but initdb is not under $pg_libdir/*/bin"; exit 1
	fi
	if is_debian; then
		log "PostgreSQL server binaries not found; install them with: sudo apt-get install -y postgresql"
	else
		log "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found; install your system's PostgreSQL server package (macOS: brew install postgresql), or set DATABASE_URL to a server of yours"
	fi
	exit 1
}

# chromium_install makes sure the browser the UI's tests drive is there:
# Debian's chromium package, installed when missing (as root, with apt-get).
chromium_install() {
	if command -v chromium >/dev/null || command -v chromium-browser >/dev/null; then return; fi
	if is_debian && [ "$(id -u)" = 0 ]; then
		log "Chromium not found (the web UI's browser tests need it); installing it: apt-get install -y chromium"
		DEBIAN_FRONTEND=noninteractive "$apt_get" update -q >&2 &&
			DEBIAN_FRONTEND=noninteractive "$apt_get" install -y -q chromium >&2 ||
			{ log "apt-get install chromium failed (see above)"; exit 1; }
		return
	fi
	log "Chromium not found: the web UI's browser tests need it (Debian: sudo apt-get install -y chromium)"
	exit 1
}

as_pg() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# node_harness_install installs the Node harness's packages
# (interop/node, run by the gateway's TestNodeHarness) from its
# package-lock, when node_modules is missing or older than the lock;
# Debian's nodejs and npm are installed first when missing (as root).
node_harness_install() {
	local dir="$root/interop/node"
	if [ -e "$dir/node_modules/.package-lock.json" ] && [ ! "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
		return
	fi
	if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
		if is_debian && [ "$(id -u)" = 0 ]; then
			log "Node.js not found (the Node harness needs it); installing it: apt-get install -y nodejs npm"
			DEBIAN_FRONTEND=noninteractive "$apt_get" update -q >&2 &&
				DEBIAN_FRONTEND=noninteractive "$apt_get" install -y -q nodejs npm >&2 ||
				{ log "apt-get install nodejs npm failed (see above)"; exit 1; }
		else
			log "Node.js and npm not found: the Node harness (interop/node) needs them (Debian: sudo apt-get install -y nodejs npm)"
			exit 1
		fi
	fi
	log "installing the Node harness's packages: npm ci --prefix interop/node"
	npm ci --prefix "$dir" --no-audit --no-fund >&2 || { log "npm ci --prefix interop/node failed (see above)"; exit 1; }
}

# pg_dir picks the cluster's directory: .data/postgres when the server's user
# can reach it, else a private directory under /tmp keyed by this checkout.
pg_dir() {
	local d="$data/postgres"
	if [ "$(id -u)" != 0 ]; then echo "$d"; return; fi
	mkdir -p "$data"
	if runuser -u postgres -- test -x "$data" 2>/dev/null && runuser -u postgres -- test -x "$root" 2>/dev/null; then
		echo "$d"; return
	fi
	# Keyed by the checkout (as before AGENTREE_DATA existed), or by the
	# data directory when AGENTREE_DATA moved it.
	local key src=$root
	[ "$data" = "$root/.data" ] || src=$data
	key=$(printf '%s' "$src" | sha256sum | cut -c1-12)
	echo "/tmp/agentree-pg-$key"
}

pg_sock_dir() { echo "$(pg_dir)/run"; }

database_url() {
	if [ -n "${DATABASE_URL:-}" ]; then echo "$DATABASE_URL"; return; fi
	echo "postgres://agentree@127.0.0.1:$PG_PORT/agentree?sslmode=disable"
}

temporal_address() {
	if [ -n "${TEMPORAL_ADDRESS:-}" ]; then echo "$TEMPORAL_ADDRESS"; return; fi
	echo "127.0.0.1:$TEMPORAL_PORT"
}

pg_up() {
	if [ -n "${DATABASE_URL:-}" ]; then log "DATABASE_URL is set; using it"; return; fi
	pg_install
	local dir sock
	dir=$(pg_dir); sock=$(pg_sock_dir)
	if [ ! -f "$dir/PG_VERSION" ]; then
		log "initdb $dir"
		mkdir -p "$dir"
		[ "$(id -u)" = 0 ] && chown postgres: "$dir" && chmod 700 "$dir"
		as_pg initdb -D "$dir" -U agentree --auth=trust -E UTF8 --no-locale >"$data/initdb.log" 2>&1 ||
			{ cat "$data/initdb.log" >&2; exit 1; }
		as_pg mkdir -p "$sock"
		cat >>"$dir/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$sock'
max_connections = 200
shared_buffers = 256MB
fsync = on
synchronous_commit = on  # a commit Temporal was told about must survive a Postgres crash (issue 35)
CONF
	fi
	if as_pg pg_ctl -D "$dir" status >/dev/null 2>&1; then
		log "postgres already running ($dir)"
	else
		log "starting postgres on 127.0.0.1:$PG_PORT"
		as_pg pg_ctl -D "$dir" -l "$dir/server.log" -w -t 60 start >/dev/null ||
			{ tail -20 "$dir/server.log" >&2; exit 1; }
	fi
	if ! as_pg psql -h "$sock" -p "$PG_PORT" -U agentree -d postgres -Atc "SELECT 1 FROM pg_database WHERE datname='agentree'" | grep -q 1; then
		as_pg createdb -h "$sock" -p "$PG_PORT" -U agentree agentree
	fi
}

pg_down() {
	[ -n "${DATABASE_URL:-}" ] && return
	local dir; dir=$(pg_dir)
	if [ -f "$dir/PG_VERSION" ] && as_pg pg_ctl -D "$dir" status >/dev/null 2>&1; then
		log "stopping postgres"
		as_pg pg_ctl -D "$dir" -m fast -w stop >/dev/null
	fi
}

temporal_build() {
	# The CLI built from the module proxy reports 0.0.0-DEV, so a stamp file
	# records which version bin/temporal is.
	local stamp="$root/bin/.temporal-version"
	if [ -x "$temporal_bin" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$TEMPORAL_VERSION" ]; then return; fi
	log "building the Temporal CLI $TEMPORAL_VERSION into bin/ (a cold build takes a few minutes)"
	mkdir -p "$root/bin"
	# go install pkg@version builds outside this module: the CLI's dependency
	# tree never touches Agentree's go.mod.
	GOFLAGS=-mod=mod GOBIN="$root/bin" progress "building the Temporal CLI" \
		go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_VERSION"
	echo "$TEMPORAL_VERSION" >"$stamp"
}

temporal_ready() {
	"$temporal_bin" operator cluster health --address "$(temporal_address)" >/dev/null 2>&1
}

# running_mode is the mode of the Temporal `up` started (dev before this
# file was recorded), else the one it would start.
running_mode() { cat "$data/temporal-mode" 2>/dev/null || echo "$TEMPORAL_MODE"; }

temporal_up() {
	if [ -n "${TEMPORAL_ADDRESS:-}" ]; then log "TEMPORAL_ADDRESS is set; using it"; return; fi
	temporal_build
	if [ "$TEMPORAL_MODE" = server ]; then temporal_server_build; fi
	mkdir -p "$data"
	if temporal_ready; then
		local running; running=$(cat "$data/temporal-mode" 2>/dev/null || echo dev)
		if [ "$running" != "$TEMPORAL_MODE" ]; then
			log "Temporal answers on $(temporal_address) in mode AGENTREE_TEMPORAL=$running; stop it first (make down), then AGENTREE_TEMPORAL=$TEMPORAL_MODE make up"
			exit 1
		fi
		log "temporal ($TEMPORAL_MODE) already running on $(temporal_address)"
		if [ "$TEMPORAL_MODE" = server ]; then temporal_server_namespace; fi
		return
	fi
	local log_file=$data/temporal.log
	if [ "$TEMPORAL_MODE" = server ]; then
		temporal_server_start; log_file=$server_dir/server.log
	else
		temporal_dev_start
	fi
	echo "$TEMPORAL_MODE" >"$data/temporal-mode"
	local i start=$SECONDS
	for i in $(seq 1 600); do
		if temporal_ready; then
			log "temporal ($TEMPORAL_MODE) answers after $((SECONDS - start))s"
			if [ "$TEMPORAL_MODE" = server ]; then temporal_server_namespace; fi
			return
		fi
		if ! kill -0 "$(cat "$data/temporal.pid")" 2>/dev/null; then
			tail -20 "$log_file" >&2; log "temporal ($TEMPORAL_MODE) exited (log $log_file)"; exit 1
		fi
		sleep 0.2
	done
	log "temporal ($TEMPORAL_MODE) did not answer within 120s (log $log_file)"; exit 1
}

temporal_dev_start() {
	log "starting the Temporal dev server on 127.0.0.1:$TEMPORAL_PORT (UI :$TEMPORAL_UI_PORT)"
	local flags=() kv name
	for kv in "${temporal_dynamic_config[@]}"; do flags+=(--dynamic-config-value "$kv"); done
	for name in "${search_attributes[@]}"; do flags+=(--search-attribute "$name=Keyword"); done
	nohup "$temporal_bin" server start-dev \
		--ip 127.0.0.1 --port "$TEMPORAL_PORT" --ui-port "$TEMPORAL_UI_PORT" \
		--db-filename "$data/temporal.db" --log-level warn "${flags[@]}" \
		>"$data/temporal.log" 2>&1 </dev/null &
	echo $! >"$data/temporal.pid"
	echo "$TEMPORAL_UI_PORT" >"$data/temporal-ui-port"
}

temporal_down() {
	[ -n "${TEMPORAL_ADDRESS:-}" ] && return
	local pidf="$data/temporal.pid"
	if [ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null; then
		log "stopping temporal ($(running_mode))"
		local pid; pid=$(cat "$pidf")
		kill "$pid"
		for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$pidf" "$data/temporal-ui-port" "$data/temporal-mode"
}

# temporal_ui is the UI of the dev server `make up` started: the port it
# was started with, else the one it would be started with.
temporal_ui() {
	echo "http://127.0.0.1:$(cat "$data/temporal-ui-port" 2>/dev/null || echo "$TEMPORAL_UI_PORT")"
}

# dev_down stops the `agentree dev` that `make run` leaves running.
dev_down() {
	local pidf="$data/dev.pid"
	if [ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null; then
		log "stopping agentree dev"
		kill "$(cat "$pidf")" 2>/dev/null || true
	fi
	rm -f "$pidf"
}

migrate() {
	DATABASE_URL=$(database_url) progress "compiling agentree to migrate" go run "$root/cmd/agentree" migrate >/dev/null
}

case "${1:-}" in
up) sandbox_install; pg_up; temporal_up; migrate; log "ready: $(database_url) $(temporal_address)";;
down) dev_down; temporal_down; pg_down;;
env)
	echo "export DATABASE_URL='$(database_url)'"; echo "export TEMPORAL_ADDRESS='$(temporal_address)'"
	# The UI is known only for the dev server this script runs (the
	# server mode runs none).
	[ -n "${TEMPORAL_ADDRESS:-}" ] || [ "$(running_mode)" != dev ] || echo "export AGENTREE_TEMPORAL_UI='$(temporal_ui)'";;
temporal-bin) temporal_build; [ "$TEMPORAL_MODE" = dev ] || temporal_server_build; echo "$temporal_bin";;
temporal-server-bin) temporal_server_build; echo "$server_bin";;
# For a supervisor of its own (tools/chaos): set up the server mode's
# databases and configuration for PG_PORT and TEMPORAL_PORT, print the
# command line (an argument a line); once it answers, register its
# namespace and search attributes.
temporal-server-prepare) temporal_server_build; temporal_server_prepare; temporal_server_cmd;;
temporal-server-namespace) temporal_build; temporal_server_namespace;;
pg-bin) pg_install; command -v initdb;;
chromium) chromium_install;;
node-harness) node_harness_install;;
progress) shift; progress "$@";;
*) echo "usage: [AGENTREE_TEMPORAL=dev|server] $0 up|down|env|temporal-bin|temporal-server-bin|temporal-server-prepare|temporal-server-namespace|pg-bin|chromium|node-harness|progress WHAT CMD..." >&2; exit 2;;
esac
