#!/usr/bin/env bash
# The Python package (python/, docs/python.md): builds it with
# `pip install ./python` into a virtual environment of its own,
# target/python-env (made once; maturin, pandas and pytest from PyPI when
# missing, so a second run installs nothing but the package), then runs its
# pytest tests and the docs' notebook example as a script. The build is
# cargo's release profile in this workspace's target folder, so the
# simulator's crates that `cargo test --release --workspace` built are
# reused. Writes only under target/ and temporary folders.
#
#     scripts/check_python.sh [RDMALAB_BINARY]
#
# With RDMALAB_BINARY, a test also checks that `rdmalab run --out` writes
# the same files as the package. Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
env=target/python-env
if ! [ -x "$env/bin/python" ]; then
  # Debian's python3 has venv in a package of its own.
  if ! python3 -m venv "$env"; then
    sudo=$(command -v sudo || true)
    $sudo apt-get update -qq && $sudo apt-get install -y -qq python3-venv
    rm -rf "$env" && python3 -m venv "$env"
  fi
fi
export PATH="$PWD/$env/bin:$PATH"
if ! python -c "import maturin, pandas, pytest" 2>/dev/null; then
  pip install -q "maturin>=1.9,<2" "pandas>=1.5" pytest
fi
# maturin from the environment above, not a fresh isolated one per build.
pip install -q --no-build-isolation ./python
if [ $# -ge 1 ]; then
  export RDMALAB_BIN="$(realpath "$1")"
fi
pytest -q -p no:cacheprovider python/tests
python docs/python_example.py > /dev/null
echo "check_python: the package's tests and docs/python_example.py passed"
