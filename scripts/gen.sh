#!/usr/bin/env bash
# gen.sh regenerates the checked-in protobuf, gRPC, grpc-gateway and OpenAPI
# code under proto/ (make generate), and converts the Swagger 2.0 document to
# OpenAPI 3. It installs what it needs: protoc from
# Debian when it is missing, and the Go plugins at the pinned versions into
# ./bin. The output is byte for byte reproducible: CI runs
# `make generate && git diff --exit-code`.
set -euo pipefail
cd "$(dirname "$0")/.."

# Pinned plugin versions. Bump them together with the runtime modules in
# go.mod (google.golang.org/protobuf, google.golang.org/grpc,
# github.com/grpc-ecosystem/grpc-gateway/v2).
PROTOC_GEN_GO=google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.11
PROTOC_GEN_GO_GRPC=google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
PROTOC_GEN_GATEWAY=github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway@v2.32.0
PROTOC_GEN_OPENAPI=github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-openapiv2@v2.32.0

if ! command -v protoc >/dev/null 2>&1; then
	echo "gen: installing protoc (Debian protobuf-compiler)" >&2
	SUDO=""
	[ "$(id -u)" = 0 ] || SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq protobuf-compiler >/dev/null
fi

BIN="$(pwd)/bin"
mkdir -p "$BIN"
# Reinstall a plugin only when its pinned version changed, so a repeat run
# costs no build.
install_plugin() {
	local pkg="$1" name stamp
	name="$(basename "${pkg%@*}")"
	stamp="$BIN/.$name.version"
	if [ -x "$BIN/$name" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$pkg" ]; then
		return
	fi
	echo "gen: installing $pkg" >&2
	GOBIN="$BIN" go install "$pkg"
	echo "$pkg" >"$stamp"
}
install_plugin "$PROTOC_GEN_GO"
install_plugin "$PROTOC_GEN_GO_GRPC"
install_plugin "$PROTOC_GEN_GATEWAY"
install_plugin "$PROTOC_GEN_OPENAPI"

OUT=proto/agentree/v1
rm -f "$OUT"/*.pb.go "$OUT"/*.pb.gw.go "$OUT"/*.swagger.json "$OUT"/*.openapi.json
PATH="$BIN:$PATH" protoc -I proto \
	--go_out=proto --go_opt=paths=source_relative \
	--go-grpc_out=proto --go-grpc_opt=paths=source_relative \
	--grpc-gateway_out=proto --grpc-gateway_opt=paths=source_relative,omit_package_doc=true \
	--grpc-gateway_opt=grpc_api_configuration="$OUT/agentree_http.yaml" \
	--openapiv2_out=proto \
	--openapiv2_opt=grpc_api_configuration="$OUT/agentree_http.yaml" \
	--openapiv2_opt=openapi_configuration="$OUT/agentree_openapi.yaml" \
	--openapiv2_opt=disable_default_errors=true,preserve_rpc_order=true \
	"$OUT/agentree.proto"

# The access declaration (an option every RPC carries) has messages only:
# Go code, no service, nothing for OpenAPI.
PATH="$BIN:$PATH" protoc -I proto \
	--go_out=proto --go_opt=paths=source_relative \
	"$OUT/access.proto"

# protoc-gen-go and protoc-gen-go-grpc stamp protoc's version into their
# headers; Debian releases differ, so the stamp is dropped to keep the output
# identical wherever it is generated.
sed -i -E '/^\/\/[[:space:]-]+protoc[[:space:]]+(v[0-9.]+|\(unknown\))$/d' "$OUT"/*.pb.go
gofmt -w "$OUT"/*.go

# The gateway serves OpenAPI 3 (current client generators and API tools
# want it); protoc-gen-openapiv2 writes Swagger 2.0, so it is converted here,
# with the kin-openapi version go.mod pins.
go run ./internal/openapi3gen "$OUT/agentree.swagger.json" "$OUT/agentree.openapi.json"
