#!/usr/bin/env bash
# What the docs' GPU figures come from, in one go on one GPU machine (torch + transformers there):
# the GPU tests, the dump benchmark, and the command itself on mixed-length data with --max-tokens.
#   bash benchmarks/run_gpu.sh OUT_DIR        (TESTS=0 skips the tests; BENCH_ARGS adds to the benchmark's)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/cg-gpu}; mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'
if [ "${TESTS:-1}" != 0 ]; then
  python3 -m pytest -q -p no:cacheprovider tests/hooks/test_hooks_gpu.py tests/hooks/test_hooks_exact.py tests/hooks/test_hooks_packing.py \
      -k "cuda or gpu or mover or packed_cli" 2>&1 | tail -4 | tee "$out/tests.log"
fi
python3 benchmarks/bench_dump.py --json "$out/bench.json" --out /tmp/cgbench ${BENCH_ARGS:-} 2>&1 | tee "$out/bench.log"
# the command: an 8B-shaped random-init Llama, 256 samples of 512-2048 tokens, token-budget batches
python3 - <<'PY'
import json, random
from transformers import LlamaConfig
LlamaConfig(hidden_size=4096, num_hidden_layers=32, intermediate_size=14336, num_attention_heads=32,
            num_key_value_heads=8, vocab_size=128256, max_position_embeddings=4096,
            tie_word_embeddings=False).save_pretrained("/tmp/cg-m8b")
r = random.Random(0)
with open("/tmp/cg-mixed.jsonl", "w") as f:
    for _ in range(256):
        f.write(json.dumps({"input_ids": [r.randrange(128256) for _ in range(r.randint(512, 2048))]}) + "\n")
PY
for pack in "" --pack; do
  for fmt in safetensors specforge; do
    rm -rf "/tmp/cg-cmd-$fmt"
    echo "== --format $fmt --max-tokens 16384 $pack" | tee -a "$out/cmd.log"
    python3 -m callgraph.cli dump --model /tmp/cg-m8b --random-init --data /tmp/cg-mixed.jsonl \
        --out "/tmp/cg-cmd-$fmt" --format "$fmt" --max-tokens 16384 $pack --check 8 2>&1 | grep -v '|' | tee -a "$out/cmd.log"
  done
done
