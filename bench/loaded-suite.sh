#!/usr/bin/env bash
# The suite on a very busy machine: a fresh clone of this checkout's HEAD runs `bash .ci/run`
# beside N busy loops (default 6: load about 10 on 2 cores), and the load average is sampled every
# 30 s. Prints the result, the duration and the loads. Usage: bash bench/loaded-suite.sh [loops] [dir]
set -u
loops=${1:-6}
dir=${2:-/tmp/tokenbench-loaded}
src=$(git rev-parse --show-toplevel)
rm -rf "$dir" && git clone -q "$src" "$dir" || exit 1
pids=()
for _ in $(seq "$loops"); do (while :; do :; done) & pids+=($!); done
loads="$dir.loads"
: > "$loads"
( while :; do cut -d' ' -f1 /proc/loadavg >> "$loads"; sleep 30; done ) & sampler=$!
start=$(date +%s)
(cd "$dir" && CI=true bash .ci/run > "$dir.log" 2>&1); rc=$?
end=$(date +%s)
kill "$sampler" "${pids[@]}" 2>/dev/null
sorted=$(sort -n "$loads")
n=$(wc -l < "$loads")
echo "commit $(git -C "$dir" rev-parse --short HEAD), $loops busy loops: rc=$rc in $(( (end - start) / 60 )) min $(( (end - start) % 60 )) s"
echo "load average (1 min) over $n samples: min $(echo "$sorted" | head -1), median $(echo "$sorted" | sed -n "$(( (n + 1) / 2 ))p"), max $(echo "$sorted" | tail -1)"
grep -E "Test Files|Tests  |FAIL|✗|×" "$dir.log" | head -20
exit $rc
