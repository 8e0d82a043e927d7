#!/usr/bin/env bash
# One device-tool call: build against the machine's torch, run the whole test
# suite and the GPU checks, then the sanitizers. Logs go to $OUT.
#   bash tools/gpu_session.sh [tests|bench|all]
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
what=${1:-all}
export PYTHONUNBUFFERED=1
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
fi
start=$(date +%s)
stamp() { echo "[$(( $(date +%s) - start ))s] $*"; }
if ! python3 -c "import torch_batchchol" 2>/dev/null; then
  stamp build
  TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=16 python3 -m pip install --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
fi
python3 -c "import torch, torch_batchchol as t; print(torch.__version__, torch.cuda.get_device_name(), t.cuda_kernels_built())"
if [ "$what" = tests ] || [ "$what" = all ]; then
  stamp pytest
  python3 -m pytest tests -q -p no:cacheprovider -x --timeout=300 2>&1 | tail -40 > "$OUT/pytest.txt"; tail -15 "$OUT/pytest.txt"
  stamp checks
  python3 tools/gpu_potrf_check.py > "$OUT/potrf_check.txt" 2>&1; tail -22 "$OUT/potrf_check.txt"
  python3 tools/gpu_check_trsm.py > "$OUT/trsm_check.txt" 2>&1; tail -30 "$OUT/trsm_check.txt"
  stamp sanitizer
  compute-sanitizer --tool memcheck --print-limit 20 python3 tools/sanitize_ops.py > "$OUT/memcheck.txt" 2>&1; tail -4 "$OUT/memcheck.txt"
  compute-sanitizer --tool racecheck --print-limit 20 python3 tools/sanitize_ops.py --quick > "$OUT/racecheck.txt" 2>&1; tail -4 "$OUT/racecheck.txt"
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  stamp bench
  python3 benchmarks/bench_fixed.py --json "$OUT/bench_fixed.json" --plot "$OUT/bench_fixed.png" > "$OUT/bench_fixed.txt" 2>"$OUT/bench_progress.txt"; cat "$OUT/bench_fixed.txt"
  python3 benchmarks/tune_potrf.py --json "$OUT/tune_potrf.json" > "$OUT/tune_potrf.txt" 2>&1; cat "$OUT/tune_potrf.txt"
fi
stamp done
