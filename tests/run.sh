#!/usr/bin/env bash
# The one test command (README, .ci/run): installs what the tests need, then runs them.
#
# Everything goes into the Python environment this is run from: the interpreter of the active
# virtual environment ($VIRTUAL_ENV), else `python3` on PATH (or $PYTHON), named before anything
# is installed. It never calls sudo and never switches to another Python. Outside a virtual
# environment it installs into that python3 only in a throw-away machine (CI=true, or as root:
# a container) or when told to (CALLGRAPH_TESTS_ANY_PYTHON=1, as .ci/run does), so a user's own
# Python is not changed behind their back.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${PYTHON:-}" ]; then PY="$PYTHON"
elif [ -n "${VIRTUAL_ENV:-}" ] && [ -x "$VIRTUAL_ENV/bin/python" ]; then PY="$VIRTUAL_ENV/bin/python"
else PY=python3; fi
if ! "$PY" -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)' && [ "${CALLGRAPH_TESTS_ANY_PYTHON:-}" != 1 ] \
   && [ "${CI:-}" != true ] && [ "$(id -u)" != 0 ]; then
  echo "tests/run.sh: $("$PY" -c 'import sys; print(sys.executable)') is not a virtual environment;" >&2
  echo "  make one first (python3 -m venv .venv && . .venv/bin/activate), or set" >&2
  echo "  CALLGRAPH_TESTS_ANY_PYTHON=1 to install into this interpreter anyway" >&2
  exit 3
fi
echo "tests/run.sh: installing into $("$PY" -c 'import sys; print(sys.prefix)')"
if ! command -v dot >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "tests/run.sh: installing Graphviz (Debian package graphviz)"
    apt-get update -qq && apt-get install -y -qq graphviz >/dev/null
  else
    echo "tests/run.sh: Graphviz's dot is missing; install it (e.g. sudo apt-get install graphviz)" >&2
    exit 3
  fi
fi
# torch's CPU build first: an unpinned torch would pull a multi-GB CUDA build.
"$PY" -c 'import torch' 2>/dev/null || "$PY" -m pip install -q torch==2.13.0
"$PY" -m pip install -q -e '.[test,dump]'
# The layering of docs/architecture.md and the one-adapter-per-library rule (setup.cfg's
# [importlinter] contracts), before the tests: a broken layer fails fast.
"$PY" -c 'from importlinter.cli import lint_imports_command; lint_imports_command()' --no-logo
# Two workers (pytest-xdist): CI has 2 cores and the real cases are CPU-bound; each worker can
# peak at ~5 GB, so not one per core on a big machine. CALLGRAPH_TEST_WORKERS=0 runs in-process.
# --dist loadgroup: the real cases of one tree run on one worker, which parses that tree once
# for all of them (tests/test_real_cases.py); every other test goes to whichever worker is free.
"$PY" -m pytest -q -n "${CALLGRAPH_TEST_WORKERS:-2}" --dist loadgroup "$@"
# The project's own pre-patch gate, as a user would run it in CI (docs/ci.md).
"$PY" -m callgraph check --config fixtures/check/self/setup.cfg
