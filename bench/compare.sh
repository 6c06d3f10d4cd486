#!/usr/bin/env bash
# Wall-clock comparison of two rdmalab binaries on one benchmark run, for a
# machine whose speed drifts (a shared VM): the binaries alternate, round by
# round, and the minimum and median event-loop seconds of each are printed.
# The minimum is the figure least disturbed by other load.
#
# usage: bench/compare.sh OLD_BINARY NEW_BINARY SCENARIO MODE [ROUNDS] [FLOWS]
#   e.g. bench/compare.sh /tmp/rdmalab.old target/release/rdmalab ws128 line-rate 5
set -euo pipefail
if [ $# -lt 4 ]; then
  echo "usage: bench/compare.sh OLD_BINARY NEW_BINARY SCENARIO MODE [ROUNDS] [FLOWS]" >&2
  exit 2
fi
old=$1 new=$2 scenario=$3 mode=$4 rounds=${5:-5}
args=(bench --scenario "$scenario" --mode "$mode")
[ $# -ge 6 ] && args+=(--flows "$6")
declare -A times
for ((r = 1; r <= rounds; r++)); do
  for which in old new; do
    bin=$old; [ "$which" = new ] && bin=$new
    line=$("$bin" "${args[@]}")
    t=$(sed -n 's/.*loop_s=\([0-9.]*\).*/\1/p' <<<"$line")
    [ -n "$t" ] || { echo "no loop_s in: $line" >&2; exit 1; }
    times[$which]+="$t "
    echo "round $r $which loop_s=$t"
  done
done
for which in old new; do
  read -r -a v <<<"${times[$which]}"
  sorted=$(printf '%s\n' "${v[@]}" | sort -n)
  min=$(head -1 <<<"$sorted")
  median=$(sed -n "$(((${#v[@]} + 1) / 2))p" <<<"$sorted")
  echo "compare $scenario $mode $which min_loop_s=$min median_loop_s=$median runs=${#v[@]}"
done
