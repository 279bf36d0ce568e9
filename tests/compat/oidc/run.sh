#!/usr/bin/env bash
# The `oidc` suite (issue 62): a real Keycloak (scripts/keycloak.sh, realms in ../keycloak/) and
# `zest start --auth oidc` with Camunda's variables, then
#   1. end to end with curl: a client-credentials token of realm `zest` works on REST (and
#      /v2/authentication/me names the client), a user's token names the user, and each of no
#      token, Basic, a malformed token, a token of realm `other` (another issuer) is 401 with
#      its reason; the same tokens on gRPC (curl over HTTP/2: grpc-status 0, or 16);
#   2. zbctl (the Go client's OAuth: ZEEBE_CLIENT_ID, ZEEBE_CLIENT_SECRET,
#      ZEEBE_AUTHORIZATION_SERVER_URL, ZEEBE_TOKEN_AUDIENCE) over gRPC: deploy, create an
#      instance, activate and complete its job; without credentials UNAUTHENTICATED;
#   3. the Java client 8.8 (CAMUNDA_CLIENT_ID, _SECRET, CAMUNDA_AUTHORIZATION_SERVER_URL,
#      CAMUNDA_TOKEN_AUDIENCE; ../java OidcAuthTest) and the Node SDK
#      (CAMUNDA_AUTH_STRATEGY=OAUTH, ZEEBE_CLIENT_ID/_SECRET, CAMUNDA_OAUTH_URL;
#      ../node/oidc-auth.test.js) over REST and gRPC.
# Env: ZEST_BIN, ZBCTL_BIN, NODE_PATH_DIR (the node run.sh chose), OIDC_CLIENTS (default
# "zbctl java node": which clients run after the curl checks).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
COMPAT=$(cd "$HERE/.." && pwd)
ROOT=$(cd "$COMPAT/../.." && pwd)
CLIENTS=${OIDC_CLIENTS:-zbctl java node}
: "${ZEST_BIN:?set ZEST_BIN}"

dir=$(mktemp -d /tmp/zest-oidc-XXXXXX)
export KEYCLOAK_RUN=$dir/keycloak
pid=""
cleanup() {
  [ -n "$pid" ] && { kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; }
  "$ROOT/scripts/keycloak.sh" stop || true
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "oidc: FAIL: $*" >&2
  echo "zest's log (last lines):" >&2; tail -20 "$dir/err.log" >&2 || true
  exit 1
}

kc=$("$ROOT/scripts/keycloak.sh" start)
realm=$kc/realms/zest
CAMUNDA_SECURITY_AUTHENTICATION_METHOD=oidc \
  CAMUNDA_SECURITY_AUTHENTICATION_OIDC_ISSUERURI=$realm \
  CAMUNDA_SECURITY_AUTHENTICATION_OIDC_AUDIENCES=zeebe-api \
  CAMUNDA_SECURITY_AUTHENTICATION_OIDC_USERNAMECLAIM=preferred_username \
  CAMUNDA_SECURITY_AUTHENTICATION_OIDC_CLIENTIDCLAIM=client_id \
  "$ZEST_BIN" start --data-dir "$dir/data" --gateway-address 127.0.0.1:0 \
  --management-address 127.0.0.1:0 --rest-address 127.0.0.1:0 >"$dir/out.log" 2>"$dir/err.log" &
pid=$!
for _ in $(seq 1 120); do grep -q READY "$dir/out.log" 2>/dev/null && break; sleep 0.5; done
grep -q READY "$dir/out.log" || fail "zest did not start"
addr=$(sed -n 's/^READY gateway=\([^ ]*\) .*/\1/p' "$dir/out.log" | head -1)
rest=http://$(sed -n 's/^READY .* rest=\([^ ]*\) .*/\1/p' "$dir/out.log" | head -1)

# ---- 1. curl
token() { # realm, curl -d arguments... (a few tries: Keycloak's first tokens can be slow)
  local r=$1 body; shift
  for _ in 1 2 3 4 5; do
    body=$(curl -s --max-time 20 "$kc/realms/$r/protocol/openid-connect/token" "$@") &&
      python3 -c 'import json, sys; print(json.loads(sys.argv[1])["access_token"])' "$body" 2>/dev/null &&
      return
    sleep 1
  done
  fail "no token from realm $r: $body"
}
client_token() { token "$1" -d grant_type=client_credentials -d client_id=zeebe -d client_secret=zeebe-secret; }
# status and body of GET $rest$1 with the given Authorization value (none when empty)
call() {
  local auth=()
  [ -n "$2" ] && auth=(-H "Authorization: $2")
  curl -s -o "$dir/body" -D "$dir/headers" -w '%{http_code}' "${auth[@]}" "$rest$1"
}
expect() { # path, authorization, status, text the body must hold
  local got
  got=$(call "$1" "$2")
  [ "$got" = "$3" ] || fail "GET $1 (${2:0:20}...): $got, expected $3: $(cat "$dir/body")"
  grep -qF -- "$4" "$dir/body" || fail "GET $1: expected '$4' in $(cat "$dir/body")"
  echo "oidc: GET $1 with ${5:-${2:0:12}}: $got, '$4'"
}
zest_token=$(client_token zest)
other_token=$(client_token other)
user_token=$(token zest -d grant_type=password -d client_id=zest-cli -d username=demo -d password=demo)
expect /v2/topology "Bearer $zest_token" 200 '"brokers"' "realm zest's client token"
expect /v2/authentication/me "Bearer $zest_token" 200 '"username":"zeebe"' "realm zest's client token"
grep -q '"canLogout":false' "$dir/body" || fail "a client cannot log out: $(cat "$dir/body")"
expect /v2/authentication/me "Bearer $user_token" 200 '"username":"demo"' "demo's token"
expect /v2/topology "" 401 'Expected credentials' "no token"
grep -qi '^www-authenticate: Bearer' "$dir/headers" || fail "401 without WWW-Authenticate: Bearer"
expect /v2/topology "Bearer $other_token" 401 "its issuer (iss) is \\\"$kc/realms/other\\\"" "realm other's token"
expect /v2/topology "Basic $(printf demo:demo | base64)" 401 '--auth oidc' "Basic"
expect /v2/topology "Bearer not.a.token" 401 'Expected a valid bearer token' "a malformed token"
# gRPC as curl speaks it (HTTP/2 without TLS): Topology's grpc-status, with each token
printf '\0\0\0\0\0' >"$dir/empty" # an empty TopologyRequest, uncompressed
grpc_status() { # authorization value (none when empty), expected grpc-status
  local auth=() body=(--data-binary @"$dir/empty")
  [ -n "$1" ] && auth=(-H "authorization: $1")
  # a refusal comes before the message is read and ends the stream: curl, still sending the
  # message, can lose that race and print nothing (exit status 92); refused calls go without it
  [ "$2" != 0 ] && body=(-X POST)
  { curl -s --http2-prior-knowledge -H 'content-type: application/grpc' -H 'te: trailers' "${auth[@]}" \
    "${body[@]}" -D - -o /dev/null "http://$addr/gateway_protocol.Gateway/Topology" || true; } |
    tr -d '\r' | sed -n 's/^grpc-status: //p' | head -1
}
for check in "zest:0" "other:16" "none:16" "basic:16"; do
  case ${check%:*} in
    zest) auth="Bearer $zest_token" ;; other) auth="Bearer $other_token" ;;
    none) auth="" ;; basic) auth="Basic $(printf demo:demo | base64)" ;;
  esac
  got=$(grpc_status "$auth" "${check#*:}")
  [ "$got" = "${check#*:}" ] || fail "gRPC Topology with ${check%:*}: grpc-status '$got', expected ${check#*:}"
  echo "oidc: gRPC Topology with ${check%:*} credentials: grpc-status $got"
done

# ---- 2. zbctl over gRPC
zbctl_run() { # realm, zbctl args... (OAuth settings of that realm, or none for realm "-")
  local r=$1; shift
  local env=(env -u ZEEBE_ADDRESS HOME="$dir/home-$r")
  if [ "$r" != - ]; then
    env+=(ZEEBE_CLIENT_ID=zeebe ZEEBE_CLIENT_SECRET=zeebe-secret ZEEBE_TOKEN_AUDIENCE=zeebe-api
      ZEEBE_AUTHORIZATION_SERVER_URL="$kc/realms/$r/protocol/openid-connect/token"
      ZEEBE_CLIENT_CONFIG_PATH="$dir/zbctl-$r-credentials")
  fi
  timeout 30 "${env[@]}" "$ZBCTL_BIN" --insecure --address "$addr" "$@"
}
if [[ " $CLIENTS " == *" zbctl "* ]]; then
  : "${ZBCTL_BIN:?set ZBCTL_BIN (run.sh builds it)}"
  zbctl_run zest status >/dev/null || fail "zbctl status with realm zest's credentials"
  zbctl_run zest deploy "$COMPAT/testdata/service_task.bpmn" >/dev/null || fail "zbctl deploy"
  zbctl_run zest create instance zest_proc >/dev/null || fail "zbctl create instance"
  jobs=$(zbctl_run zest activate jobs zest_proc.work --maxJobsToActivate 1) || fail "zbctl activate jobs"
  key=$(printf '%s' "$jobs" | python3 -c 'import json, sys; print(json.load(sys.stdin)["jobs"][0]["key"])')
  zbctl_run zest complete job "$key" >/dev/null || fail "zbctl complete job $key"
  echo "oidc: zbctl with realm zest's client credentials: deployed, created, completed job $key"
  # (with realm other's credentials the Go client fetches a new token and retries an
  # UNAUTHENTICATED call until its deadline: the curl checks above cover that token)
  out=$(zbctl_run - status 2>&1) && fail "zbctl status without credentials passed"
  grep -q 'Unauthenticated\|UNAUTHENTICATED' <<<"$out" || fail "zbctl status without credentials: $out"
  echo "oidc: zbctl without credentials: UNAUTHENTICATED"
fi

# ---- 3. the Java client and the Node SDK, each with its own variables
if [[ " $CLIENTS " == *" java "* ]]; then
  (cd "$COMPAT/java" && rm -rf target/surefire-reports &&
    ZEEBE_ADDRESS=$addr ZEEBE_REST_ADDRESS=$rest CAMUNDA_CLIENT_ID=zeebe \
      CAMUNDA_CLIENT_SECRET=zeebe-secret CAMUNDA_TOKEN_AUDIENCE=zeebe-api \
      CAMUNDA_AUTHORIZATION_SERVER_URL=$realm/protocol/openid-connect/token \
      CAMUNDA_OAUTH_URL=$realm/protocol/openid-connect/token \
      CAMUNDA_CLIENT_CONFIG_PATH=$dir/java-credentials \
      mvn -B -q test -Dtest=OidcAuthTest) || fail "the Java client"
  echo "oidc: the Java client: passed"
fi
if [[ " $CLIENTS " == *" node "* ]]; then
  (cd "$COMPAT/node" && ZEEBE_ADDRESS=$addr ZEEBE_REST_ADDRESS=$rest CAMUNDA_AUTH_STRATEGY=OAUTH \
    ZEEBE_CLIENT_ID=zeebe ZEEBE_CLIENT_SECRET=zeebe-secret ZEEBE_TOKEN_AUDIENCE=zeebe-api \
    CAMUNDA_OAUTH_URL=$realm/protocol/openid-connect/token CAMUNDA_TOKEN_DISK_CACHE_DISABLE=true \
    PATH="${NODE_PATH_DIR:+$NODE_PATH_DIR:}$PATH" node --test --test-reporter=spec oidc-auth.test.js) ||
    fail "the Node SDK"
  echo "oidc: the Node SDK: passed"
fi
echo "oidc: passed"
