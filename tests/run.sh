#!/usr/bin/env bash
# The one test command (README, .ci/run): installs what the tests need, then runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v dot >/dev/null 2>&1; then
  echo "tests/run.sh: installing Graphviz (Debian package graphviz)"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq graphviz >/dev/null
  else sudo apt-get update -qq && sudo apt-get install -y -qq graphviz >/dev/null; fi
fi
# torch's CPU build first: an unpinned torch would pull a multi-GB CUDA build.
python3 -c 'import torch' 2>/dev/null || python3 -m pip install -q torch==2.13.0
python3 -m pip install -q -e '.[test,dump]'
# The layering of docs/architecture.md and the one-adapter-per-library rule (setup.cfg's
# [importlinter] contracts), before the tests: a broken layer fails fast.
lint-imports --no-logo
python3 -m pytest -q "$@"
# The project's own pre-patch gate, as a user would run it in CI (docs/ci.md).
python3 -m callgraph.cli check --config fixtures/check/self/setup.cfg
