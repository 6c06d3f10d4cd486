#!/usr/bin/env bash
# The noise-free speed figure: counts the instructions one `rdmalab bench`
# run executes, under valgrind (callgrind's counter, no cache simulation), and
# prints them per packet-hop. The same binary, scenario and seed always give
# the same count, whatever else the machine is doing.
#
# usage: bench/instructions.sh SCENARIO MODE [FLOWS]
#   e.g. bench/instructions.sh ws128 line-rate 100
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
  echo "usage: bench/instructions.sh SCENARIO MODE [FLOWS]" >&2
  exit 2
fi
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
cargo build --release -q
args=(bench --scenario "$1" --mode "$2")
[ $# -ge 3 ] && args+=(--flows "$3")
log=$(mktemp)
trap 'rm -f "$log" callgrind.out.rdmalab.$$' EXIT
if ! line=$(valgrind --tool=callgrind --callgrind-out-file=callgrind.out.rdmalab.$$ \
  target/release/rdmalab "${args[@]}" 2>"$log"); then
  grep -v '^==' "$log" >&2
  exit 1
fi
echo "$line"
instr=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$log")
hops=$(sed -n 's/.*packet_hops=\([0-9]*\).*/\1/p' <<<"$line")
[ -n "$instr" ] && [ -n "$hops" ] || { cat "$log" >&2; exit 1; }
echo "instructions $1 $2 instructions=$instr packet_hops=$hops per_hop=$((instr / hops))"
