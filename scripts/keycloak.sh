#!/usr/bin/env bash
# A real Keycloak for the OIDC tests (issue 62): Keycloak's distribution from Maven Central
# (org.keycloak:keycloak-quarkus-dist, checked against its .sha1), cached under
# $KEYCLOAK_CACHE (default ~/.cache/zest/keycloak), run in dev mode on 127.0.0.1 with an
# in-memory database and the realms of tests/compat/keycloak/ imported (realm `zest`: the
# confidential client `zeebe` / `zeebe-secret` for client credentials, the public client
# `zest-cli` for a user's password grant, the user demo/demo, tokens with the audience
# `zeebe-api`; realm `other`: the same under another issuer).
#
#   scripts/keycloak.sh install   # download and unpack (once)
#   scripts/keycloak.sh start     # start, wait until the realms answer, print the base URL
#   scripts/keycloak.sh stop      # stop the one started
#
# Env: KEYCLOAK_VERSION (26.5.6), KEYCLOAK_PORT (default: a free port), KEYCLOAK_RUN (pid, URL
# and log; default target/keycloak), KEYCLOAK_JAVA_HOME (default Temurin 25, else JAVA_HOME or
# the system's java; Keycloak 26 needs Java 21 or newer).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VERSION=${KEYCLOAK_VERSION:-26.5.6}
CACHE=${KEYCLOAK_CACHE:-$HOME/.cache/zest/keycloak}
RUN=${KEYCLOAK_RUN:-$ROOT/target/keycloak}
HOME_DIR=$CACHE/keycloak-$VERSION
URL=https://repo1.maven.org/maven2/org/keycloak/keycloak-quarkus-dist/$VERSION/keycloak-quarkus-dist-$VERSION.zip

die() { printf 'keycloak: %s\n' "$*" >&2; exit 1; }

java_home() {
  local candidate
  for candidate in "${KEYCLOAK_JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64 "${JAVA_HOME:-}"; do
    [ -n "$candidate" ] && [ -x "$candidate/bin/java" ] && { echo "$candidate"; return; }
  done
  command -v java >/dev/null || die "no Java found: Keycloak $VERSION needs Java 21 or newer (KEYCLOAK_JAVA_HOME)"
  dirname "$(dirname "$(readlink -f "$(command -v java)")")"
}

install() {
  [ -x "$HOME_DIR/bin/kc.sh" ] && return
  mkdir -p "$CACHE"
  local zip=$CACHE/keycloak-quarkus-dist-$VERSION.zip
  if [ ! -s "$zip" ]; then
    echo "keycloak: downloading $URL" >&2
    curl -fsSL --retry 3 -o "$zip.part" "$URL"
    local want
    want=$(curl -fsSL --retry 3 "$URL.sha1" | cut -c1-40)
    [ "$(sha1sum "$zip.part" | cut -c1-40)" = "$want" ] || { rm -f "$zip.part"; die "$URL: checksum mismatch"; }
    mv "$zip.part" "$zip"
  fi
  rm -rf "$HOME_DIR.part" && mkdir -p "$HOME_DIR.part"
  if command -v unzip >/dev/null; then
    unzip -q "$zip" -d "$HOME_DIR.part"
  else # Python's zipfile keeps no file modes
    python3 -m zipfile -e "$zip" "$HOME_DIR.part"
    chmod +x "$HOME_DIR.part/keycloak-$VERSION"/bin/*.sh
  fi
  mv "$HOME_DIR.part/keycloak-$VERSION" "$HOME_DIR"
  rmdir "$HOME_DIR.part"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
  install
  mkdir -p "$RUN"
  if [ -f "$RUN/pid" ] && kill -0 "$(cat "$RUN/pid")" 2>/dev/null; then
    cat "$RUN/url"; return
  fi
  local port=${KEYCLOAK_PORT:-$(free_port)} jh t0=$SECONDS
  jh=$(java_home)
  # the realms are imported at each start into the in-memory database
  rm -rf "$HOME_DIR/data/import" && mkdir -p "$HOME_DIR/data/import"
  cp "$ROOT"/tests/compat/keycloak/*-realm.json "$HOME_DIR/data/import/"
  # its own process group, so that stop ends the script and its JVM together
  JAVA_HOME=$jh setsid "$HOME_DIR/bin/kc.sh" start-dev --http-host=127.0.0.1 --http-port="$port" \
    --db=dev-mem --import-realm >"$RUN/log" 2>&1 </dev/null &
  echo $! >"$RUN/pid"
  local url=http://127.0.0.1:$port
  for _ in $(seq 1 240); do
    if curl -sf -o /dev/null "$url/realms/zest/.well-known/openid-configuration" &&
      curl -sf -o /dev/null "$url/realms/other/.well-known/openid-configuration"; then
      echo "$url" >"$RUN/url"
      echo "keycloak: $VERSION ready at $url in $((SECONDS - t0)) s" >&2
      echo "$url"
      return
    fi
    kill -0 "$(cat "$RUN/pid")" 2>/dev/null || break
    sleep 0.5
  done
  tail -30 "$RUN/log" >&2
  stop
  die "Keycloak did not start (log: $RUN/log)"
}

stop() {
  [ -f "$RUN/pid" ] || return 0
  local pid
  pid=$(cat "$RUN/pid")
  kill -TERM -- "-$pid" 2>/dev/null || true
  for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  kill -KILL -- "-$pid" 2>/dev/null || true
  rm -f "$RUN/pid" "$RUN/url"
}

case ${1:-} in
  install) install ;;
  start) start ;;
  stop) stop ;;
  *) die "usage: $0 install|start|stop" ;;
esac
