#!/usr/bin/env bash
# On the lent GPU machine, from the repository root, with build/ carried from the build host:
# runs the gpu-labelled tests and the GPU benchmarks in one call; logs go under $OUT.
#   scripts/device-check.sh [quick]     (quick: tests only)
set -uo pipefail
out="${OUT:-/tmp/gemmtune-device}"
mkdir -p "$out"
export GEMMTUNE_CACHE=/tmp/gemmtune-cache
cd "$(dirname "$0")/.."
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
} >"$out/device.txt" 2>&1
cat "$out/device.txt"
status=0
echo "== gpu tests"
build/gemmtune_gpu_tests --durations yes 2>&1 | tee "$out/gpu_tests.log" | tail -25 || status=1
[[ "${PIPESTATUS[0]}" == 0 ]] || status=1
if [[ "${1:-}" != quick ]]; then
  echo "== measure: model top 10 against cuBLAS"
  for shape in "s 4096 4096 4096" "s 8192 8192 8192" "s 6144 6016 128" "s 6144 128 128" "s 8192 8192 32" \
               "s 1000 1000 1000" "s 4097 4097 4097" "d 4096 4096 4096" "d 6144 6016 128"; do
    set -- $shape
    build/gemmtune measure -p "$1" -m "$2" -n "$3" -k "$4" --top 10 --format json \
      >"$out/measure_$1_$2x$3x$4.json" 2>>"$out/measure.err" || status=1
    python3 - "$out/measure_$1_$2x$3x$4.json" <<'PY' || true
import json, sys
r = json.load(open(sys.argv[1]))
best = max((x for x in r["results"] if x["status"] == "ok"), key=lambda x: x["gflops"], default=None)
print(f'{r["problem"]:28s} cuBLAS {r["cublas_gflops"]:8.0f}  best of top10 {best["gflops"] if best else 0:8.0f} GFLOP/s'
      f'  ratio {best["vs_cublas"] if best else 0:.3f}  model top1 ratio {r["results"][0]["vs_cublas"]:.3f}  wall {r["wall_s"]:.1f}s')
PY
  done
fi
exit $status
