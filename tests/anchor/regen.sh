#!/usr/bin/env bash
# Regenerates tests/anchor/scenarios/*.zeebe: runs each scenario's steps on the real Zeebe
# engine (../shared/anchors/zeebe, via dump.sh) and stores the record stream it wrote.
# Usage: tests/anchor/regen.sh [NAME ...]   (JSON arguments in .steps files: no spaces)
set -eu
cd "$(dirname "$0")"
names=("$@")
[ ${#names[@]} -gt 0 ] || names=($(ls scenarios/*.steps | xargs -n1 basename | sed 's/\.steps$//'))
for n in "${names[@]}"; do
  # shellcheck disable=SC2046
  ./dump.sh $(grep -v '^#' "scenarios/$n.steps") > "scenarios/$n.zeebe.tmp"
  mv "scenarios/$n.zeebe.tmp" "scenarios/$n.zeebe"
  echo "$n: $(wc -l < "scenarios/$n.zeebe") records"
done
