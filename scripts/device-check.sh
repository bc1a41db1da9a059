#!/usr/bin/env bash
# On the lent GPU machine, from the repository root, with build/ carried from the build host:
# the gpu-labelled tests and the GPU benchmarks in one call, logs under $OUT.
#   scripts/device-check.sh [tests] [vs_cublas PRECISIONS SECONDS]
#                           [sweeps FIRST LAST SECONDS_EACH SAMPLE STOP_AFTER_S]
# sweeps: lines FIRST..LAST of bench/sweep_problems.txt, each a sampled sweep of the compact
# domain (5 repetitions) for at most SECONDS_EACH, none started after STOP_AFTER_S seconds of
# this script; the store is $OUT/sweeps_FIRST.db (kept even if the call is cut off).
# With no arguments: tests, then vs_cublas for s and d with 20 s of tuning per shape.
set -uo pipefail
out="${OUT:-/tmp/gemmtune-device}"
mkdir -p "$out"
export GEMMTUNE_CACHE=/tmp/gemmtune-cache
cd "$(dirname "$0")/.."
# Libraries the device lacks travel in build/ (rpath $ORIGIN).
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
} >"$out/device.txt" 2>&1
cat "$out/device.txt"
[[ $# -eq 0 ]] && set -- tests vs_cublas sd 20
status=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    tests)
      echo "== gpu tests"
      build/gemmtune_gpu_tests --durations yes >"$out/gpu_tests.log" 2>&1 || status=1
      grep -E "passed|failed|FAILED|us$|s: gpu" "$out/gpu_tests.log" | tail -20
      shift ;;
    vs_cublas)
      echo "== vs_cublas $2, $3 s tuning per shape"
      build/vs_cublas --precision "$2" --seconds "$3" --db "$out/vs_cublas_$2.db" 2>"$out/vs_cublas_$2.err" |
        tee "$out/vs_cublas_$2.txt" || status=1
      build/gemmtune export --db "$out/vs_cublas_$2.db" --output "$out/attempts_$2.csv" || status=1
      rm -f "$out/vs_cublas_$2.db"*
      shift 3 ;;
    sweeps)
      echo "== sweeps of problems $2..$3, $4 s each, sample $5"
      grep -v '^#' bench/sweep_problems.txt | sed -n "$2,$3p" | while read -r args; do
        if ((SECONDS > $6)); then echo "stopping before $args: $SECONDS s used"; break; fi
        # shellcheck disable=SC2086
        build/gemmtune sweep $args --domain compact </dev/null --sample "$5" --seconds "$4" -r 5 \
          --timeout 20 --db "$out/sweeps_$2.db" 2>>"$out/sweeps_$2.err" | tee -a "$out/sweeps_$2.txt"
      done
      shift 6 ;;
    *) echo "unknown step $1" >&2; exit 2 ;;
  esac
done
exit $status
