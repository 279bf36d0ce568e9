#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests of the PostgreSQL history store: Debian's
# PostgreSQL (installed here when it is missing), a fresh cluster in a temporary directory,
# listening on 127.0.0.1 only with trust authentication, with a database `zest`.
#
#   scripts/postgres.sh start DIR PORT   starts it; prints its URL (postgres://zest@127.0.0.1:PORT/zest)
#   scripts/postgres.sh stop DIR         stops it (fast shutdown)
#   scripts/postgres.sh kill DIR         SIGKILLs the postmaster (a crash)
#
# As root the server runs as the `postgres` user (PostgreSQL refuses to run as root).
set -euo pipefail

cmd=${1:?start, stop or kill}
dir=${2:?a directory for the cluster}

bindir() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
  if [ -z "$d" ]; then
    echo "postgres.sh: PostgreSQL not found; installing Debian's" >&2
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    d=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  fi
  echo "$d"
}

as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

case "$cmd" in
  start)
    port=${3:?a port}
    bin=$(bindir)
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    if [ ! -f "$dir/PG_VERSION" ]; then
      as_owner "$bin/initdb" -D "$dir" -U zest --auth=trust --no-sync -E UTF8 --locale=C.UTF-8 >/dev/null
    fi
    # fsync stays on: the fault tests stop and kill this server and expect what it committed
    as_owner "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 \
      -o "-h 127.0.0.1 -p $port -k $dir -c max_connections=200" start >/dev/null
    as_owner "$bin/psql" -h 127.0.0.1 -p "$port" -U zest -d postgres -qAt \
      -c "SELECT 1 FROM pg_database WHERE datname = 'zest'" | grep -q 1 \
      || as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U zest zest
    echo "postgres://zest@127.0.0.1:$port/zest"
    ;;
  stop)
    bin=$(bindir)
    as_owner "$bin/pg_ctl" -D "$dir" -m fast -w stop >/dev/null
    ;;
  kill)
    kill -9 "$(head -1 "$dir/postmaster.pid")"
    ;;
  *)
    echo "postgres.sh: unknown command $cmd" >&2
    exit 2
    ;;
esac
