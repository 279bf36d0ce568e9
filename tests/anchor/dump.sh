#!/usr/bin/env bash
# Prints the record stream of the real Zeebe engine (../shared/anchors/zeebe) for a scenario:
#   tests/anchor/dump.sh deploy model.bpmn create my-process complete task-type
# Steps are described in RecordDump.java. Builds the anchor in a scratch copy on first use.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
anchor_src=${ANCHOR_SRC:-$here/../../../shared/anchors/zeebe}
anchor=${ANCHOR_BUILD:-/tmp/zest-zeebe-anchor}
for j in ${JAVA_HOME:-} /usr/lib/jvm/temurin-2[1-9]* /usr/lib/jvm/java-2[1-9]* /usr/lib/jvm/temurin-[3-9]*; do
  [ -n "$j" ] && [ -x "$j/bin/java" ] && "$j/bin/java" -version 2>&1 | grep -qE 'version "(2[1-9]|[3-9][0-9])' && export JAVA_HOME=$j && break
done
export PATH=$JAVA_HOME/bin:$PATH
if [ ! -d "$anchor/target/lib" ]; then
  rm -rf "$anchor" && cp -r "$anchor_src" "$anchor"
  (cd "$anchor" && mvn -q -DskipTests package >&2)
fi
exec java -cp "$anchor/target/zeebe-anchor-1.jar:$anchor/target/lib/*" "$here/RecordDump.java" "$@" 2>${DUMP_STDERR:-/dev/null}
