#!/usr/bin/env bash
# The fuzzing harness's long run (docs/fuzzing.md): the targets of
# crates/cli/tests/it/fuzz/ (scenario: the scenario parser, checks,
# builder and a short run; net: `net serve`'s control protocol; visor:
# rdmavisord's sessions) with ITERATIONS inputs each (default 20000) from
# SEED (default 1), or TARGET alone. The suite runs a short pass of each
# (150, 30 and 40 inputs, seed 1). A finding fails with its seed and
# iteration; `RDMALAB_FUZZ_ONLY=I scripts/fuzz.sh 1 SEED TARGET` tries
# that input alone and prints it.
#
# Usage: scripts/fuzz.sh [ITERATIONS] [SEED] [scenario|net|visor]
set -euo pipefail
cd "$(dirname "$0")/.."
RDMALAB_FUZZ_ITERATIONS=${1:-20000} RDMALAB_FUZZ_SEED=${2:-1} \
  cargo test --release -q -p rdmalab --test it "fuzz::${3:-}" -- --nocapture --test-threads 1
