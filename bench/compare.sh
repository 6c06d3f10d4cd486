#!/usr/bin/env bash
# Wall-clock comparison of two rdmalab binaries on one benchmark run, for a
# machine whose speed drifts (a shared VM): the binaries alternate, round by
# round, and the minimum and median event-loop seconds of each are printed.
# The minimum is the figure least disturbed by other load; the median of
# the per-round new/old ratios is the steadiest when the machine drifts.
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
# Each round's new/old ratio: a drift in the machine's speed between rounds
# cancels within a round, so the median ratio is the steadiest figure.
read -r -a o <<<"${times[old]}"
read -r -a n <<<"${times[new]}"
ratios=$(for ((i = 0; i < ${#o[@]}; i++)); do
  awk -v a="${o[$i]}" -v b="${n[$i]}" 'BEGIN { printf "%.3f\n", (a > 0 ? b / a : 0) }'
done | sort -n)
echo "compare $scenario $mode new/old median_ratio=$(sed -n "$(((${#o[@]} + 1) / 2))p" <<<"$ratios") min_ratio=$(head -1 <<<"$ratios") max_ratio=$(tail -1 <<<"$ratios")"
