#!/usr/bin/env bash
# Builds the HPCC ns-3 simulator (alibaba-edu/High-Precision-Congestion-Control,
# the commit the references were made with) outside this repository, for
# the comparisons of docs/ns3_validation.md (scripts/ns3_micro.py runs it).
#
#   scripts/ns3_build.sh [DIR]     # default DIR: ../ns3-hpcc beside the repository
#
# Idempotent: clones DIR if absent, checks out the pinned commit, turns
# rdma-hw.cc's PRINT_LOG on (DCQCN's rate changes printed on stdout; files
# ns-3 writes are unchanged: the FCT file of WS128 is the reference's),
# configures once and builds incrementally. The first build takes 5-25
# minutes on 2 cores with gcc 12; later runs are seconds. Needs git, g++,
# and Python 2.7 for waf (pyenv's 2.7.18 is used when pyenv has it).
# The binary is DIR/simulation/build/scratch/third.
set -euo pipefail

COMMIT=9f4be2a9
REPO_URL=https://github.com/alibaba-edu/High-Precision-Congestion-Control
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:-$ROOT/../ns3-hpcc}

if [ ! -d "$DIR/simulation" ]; then
  git clone "$REPO_URL" "$DIR"
fi
if [ -d "$DIR/.git" ]; then
  git -C "$DIR" checkout -q "$COMMIT" -- simulation
fi

cd "$DIR/simulation"
sed -i 's/^#define PRINT_LOG 0$/#define PRINT_LOG 1/' src/point-to-point/model/rdma-hw.cc
grep -q '^#define PRINT_LOG 1$' src/point-to-point/model/rdma-hw.cc || {
  echo "rdma-hw.cc: no '#define PRINT_LOG' line to turn on (not commit $COMMIT?)" >&2
  exit 1
}

# waf is Python 2: pyenv's 2.7.18 if it is there, else python2 on PATH.
if command -v pyenv >/dev/null && pyenv versions --bare | grep -qx 2.7.18; then
  export PYENV_VERSION=2.7.18
  PY=python
else
  PY=python2
fi
"$PY" -c 'import sys; assert sys.version_info[0] == 2' || {
  echo "waf needs Python 2.7 (pyenv install 2.7.18, or python2 on PATH)" >&2
  exit 1
}

if [ ! -f build/c4che/_cache.py ]; then
  CXXFLAGS="-Wno-error" "$PY" ./waf configure --build-profile=optimized
fi
"$PY" ./waf build -j2
echo "built: $DIR/simulation/build/scratch/third"
