#!/usr/bin/env bash
# A sweep run as separate processes by GNU parallel gives the same
# directory, byte for byte, as `rdmalab sweep --out`: the plan
# (`sweep --plan`), one `rdmalab run --plan --index K` per run, then
# `rdmalab merge`, all with --report, compared with `diff -r`. Also checks
# that merge names a missing run and fails. Installs GNU parallel from
# Debian's packages when missing. Writes only under a temporary directory
# (removed at the end). Run by .ci/run.
#
#   scripts/sweep_parallel.sh [RDMALAB_BINARY] [JOBS]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-target/release/rdmalab}")
jobs=${2:-2}
if ! command -v parallel >/dev/null; then
  sudo=$(command -v sudo || true)
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq parallel
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A tiny sweep: 2 seeds x lossless/lossy x two flow sizes of an incast.
scenario=scenarios/incast_pfc.toml
args=(--seeds 1..2 --vary switch.pfc=true,false --vary traffic.0.bytes=20000,60000)

t0=$(date +%s.%N)
"$bin" sweep "$scenario" "${args[@]}" --jobs "$jobs" --out "$tmp/sweep" --report >/dev/null
t1=$(date +%s.%N)
"$bin" sweep "$scenario" "${args[@]}" --plan "$tmp/plan.json" >/dev/null
n=$(grep -c '"index":' "$tmp/plan.json")
seq 0 $((n - 1)) | parallel --will-cite -j "$jobs" --halt now,fail=1 \
  "$bin" run --plan "$tmp/plan.json" --index {} --out "$tmp/parallel" --report '>/dev/null'
"$bin" merge "$tmp/parallel" --report >/dev/null
t2=$(date +%s.%N)
if ! diff -r "$tmp/sweep" "$tmp/parallel"; then
  echo "sweep_parallel: FAILED: GNU parallel's directory differs from rdmalab sweep's" >&2
  exit 1
fi
# merge names what is missing, and fails.
rm -r "$tmp/parallel/seed2_switch.pfc=false_traffic.0.bytes=60000"
if "$bin" merge "$tmp/parallel" >/dev/null 2>"$tmp/err"; then
  echo "sweep_parallel: FAILED: merge of an incomplete sweep succeeded" >&2
  exit 1
fi
grep -q -- "--index 7 (seed2_switch.pfc=false_traffic.0.bytes=60000)" "$tmp/err" || {
  echo "sweep_parallel: FAILED: merge did not name the missing run:" >&2
  cat "$tmp/err" >&2
  exit 1
}
awk -v n="$n" -v a="$t0" -v b="$t1" -v c="$t2" -v j="$jobs" 'BEGIN {
  printf "sweep_parallel: ok, %d runs: GNU parallel + merge byte-identical to sweep (%.2f s vs %.2f s, %d jobs)\n", n, c - b, b - a, j }'
