#!/usr/bin/env bash
# shellcheck disable=SC2317  # the per-problem steps are called through each_problem
# On the lent GPU machine, from the repository root, with build/ carried from the build host:
# the gpu-labelled tests and the GPU benchmarks in one call, logs under $OUT.
#   scripts/device-check.sh [tests] [vs_cublas PRECISIONS SECONDS]
#                           [sweeps FIRST LAST SECONDS_EACH SAMPLE STOP_AFTER_S]
#                           [tunes LINES SECONDS_EACH STOP_AFTER_S] [profile]
#                           [exhaustive LINES TUNE_SECONDS STOP_AFTER_S]
#                           [capped LINES SECONDS_EACH STOP_AFTER_S]
#                           [calibrated LINES EVALUATIONS CALIBRATION.json STOP_AFTER_S]
#                           [counters LINES EVALUATIONS STOP_AFTER_S] [ncu LIST]
#                           [ncu_winners [LIST]]
# tunes: the lines (comma-separated numbers) of bench/sweep_problems.txt, each a hybrid tune.
# sweeps: lines FIRST..LAST of bench/sweep_problems.txt, each a sampled sweep of the compact
# domain (5 repetitions) for at most SECONDS_EACH, none started after STOP_AFTER_S seconds of
# this script; the store is $OUT/sweeps_FIRST.db (kept even if the call is cut off).
# SWEEP_DOMAIN names another domain to sample (tensor: the FP64 tensor-core kernels).
# exhaustive: for each of the lines, a hybrid tune of the compact domain from an empty compile
# cache (its wall time is the user's), then a sweep of every configuration of that domain; the
# stores are $OUT/exhaustive_tunes.db and $OUT/exhaustive.db; no sweep runs past STOP_AFTER_S;
# TUNE_SECONDS 0 sweeps without the tune.
# capped: for each of the lines, a hybrid tune of the compact domain from an empty compile cache
# that may measure at most 5% of the pruned space (issue 3's budget) and run SECONDS_EACH;
# the store is $OUT/capped.db.
# calibrated: for each of the lines, a hybrid tune of the compact domain that measures
# EVALUATIONS configurations, ranked by the uncalibrated model and then by CALIBRATION.json.
# ncu: for each line "PROBLEM_OPTIONS | CONFIG" of LIST, `gemmtune measure` of the configuration
# beside cuBLAS under Nsight Compute (clocks left as they are), every kernel of the process
# profiled; ncu_N.csv (in $OUT/ncu.tgz) holds line N's details
# page (with the stall reasons per active warp), ncu_N.txt what measure printed.
# ncu_winners: the same for the winners of this call's vs_cublas steps, after the lines of LIST.
# With no arguments: tests, then vs_cublas for s and d with 20 s of tuning per shape.
# vs_cublas reads VS_DOMAIN (full or compact; default full) and VS_SET (targets, wins or all;
# default targets: issue 6's shapes), VS_ONLY (comma-separated shape names; default all) and
# VS_CALIBRATION (a JSON file of `gemmtune calibrate -o`; default none: uncalibrated).
set -uo pipefail
out="${OUT:-/tmp/gemmtune-device}"
mkdir -p "$out"
export GEMMTUNE_CACHE=/tmp/gemmtune-cache
mkdir -p "$GEMMTUNE_CACHE"
cd "$(dirname "$0")/.."
# Lines LINES (comma-separated numbers) of bench/sweep_problems.txt, comments left out.
problem_lines() { grep -v '^#' bench/sweep_problems.txt | sed -n "$(echo "$1" | sed 's/,/p;/g')p"; }
# fresh_tune LOG TUNE_OPTIONS...: a hybrid tune of the compact domain from an empty compile cache,
# so that its wall time is what a user's first run pays; its cubins then warm the shared cache.
fresh_tune() {
  local log=$1 fresh
  shift
  fresh=$(mktemp -d)
  GEMMTUNE_CACHE=$fresh /usr/bin/time -f "  wall %e s" build/gemmtune tune "$@" --domain compact \
    --calibration none </dev/null 2>&1 | tee -a "$log"
  cp -n "$fresh"/* "$GEMMTUNE_CACHE"/ 2>/dev/null
  rm -rf "$fresh"
}
# each_problem LINES STOP_AFTER_S STEP PARAMS...: for each of the lines, STEP PROBLEM_OPTIONS
# PARAMS..., none started after STOP_AFTER_S seconds of this script.
each_problem() {
  local lines=$1 stop=$2 args
  shift 2
  problem_lines "$lines" |
    while read -r args; do
      if ((SECONDS > stop)); then echo "stopping before $args: $SECONDS s used"; break; fi
      "$1" "$args" "${@:2}"
    done
}
# The per-problem steps: PROBLEM_OPTIONS, then the step's parameters. Problem options are split
# into words on purpose (shellcheck SC2086).
# shellcheck disable=SC2086
tune_step() {  # SECONDS
  /usr/bin/time -f "  wall %e s" build/gemmtune tune $1 --seconds "$2" </dev/null \
    --calibration none --db "$out/tunes.db" 2>&1 | tee -a "$out/tunes.txt"
}
# shellcheck disable=SC2086
exhaustive_step() {  # TUNE_SECONDS STOP_AFTER_S
  (($2 > 0)) && fresh_tune "$out/exhaustive_tunes.txt" $1 --seconds "$2" \
    --db "$out/exhaustive_tunes.db"
  build/gemmtune sweep $1 --domain compact --seconds $(($3 - SECONDS)) -r 5 \
    --timeout 20 --db "$out/exhaustive.db" </dev/null 2>>"$out/exhaustive.err" |
    tee -a "$out/exhaustive.txt"
  tail -1 "$out/exhaustive.err"
}
# shellcheck disable=SC2086
capped_step() {  # SECONDS
  local pruned
  pruned=$(build/gemmtune space $1 --domain compact | awk 'END { print $NF }')
  echo "$1: pruned space $pruned, at most $((pruned / 20)) measurements" |
    tee -a "$out/capped.txt"
  fresh_tune "$out/capped.txt" $1 --seconds "$2" --evaluations $((pruned / 20)) \
    --db "$out/capped.db"
}
# shellcheck disable=SC2086
calibrated_step() {  # EVALUATIONS CALIBRATION.json
  local calibration
  for calibration in none "$3"; do
    echo "$1 --calibration $calibration" | tee -a "$out/calibrated.txt"
    build/gemmtune tune $1 --domain compact --evaluations "$2" --calibration "$calibration" \
      --db "$out/calibrated_$(basename "$calibration").db" </dev/null 2>&1 |
      tail -2 | tee -a "$out/calibrated.txt"
  done
}
# shellcheck disable=SC2086
counters_step() {  # EVALUATIONS
  build/gemmtune tune $1 --domain compact --evaluations "$2" --counters \
    --calibration none --db "$out/counters.db" </dev/null 2>&1 | tail -2 |
    tee -a "$out/counters.txt"
}
# ncu_list LIST: Nsight Compute on each "PROBLEM_OPTIONS | CONFIG" line of LIST beside cuBLAS.
# The stall reasons are named metrics: the sections' csv pages leave their breakdown out.
stall_metrics=$(printf 'smsp__warp_issue_stalled_%s_per_warp_active.pct,' barrier \
  long_scoreboard short_scoreboard mio_throttle math_pipe_throttle wait not_selected \
  dispatch_stall no_instruction lg_throttle branch_resolving)
ncu_list() {
  local n=0 args config
  while IFS='|' read -r args config; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    /usr/local/cuda/bin/ncu --clock-control none --csv --page details \
      --section SpeedOfLight --section Occupancy --section LaunchStats \
      --section WarpStateStats --section SchedulerStats --section InstructionStats \
      --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
      --metrics "${stall_metrics%,}" --log-file "$out/ncu_$n.csv" \
      build/gemmtune measure $args -c $config -t 0 -r 1 </dev/null >"$out/ncu_$n.txt" \
      2>&1 || status=1
    echo "$n: $args $config: $(grep -c gemmtune_kernel "$out/ncu_$n.csv") rows of ours"
  done < <(grep -v '^#' "$1")
  # One archive: the machine hands back only so many files.
  (cd "$out" && tar czf ncu.tgz ncu_*.csv ncu_*.txt && rm -f ncu_*.csv ncu_*.txt)
}
# The winners of the vs_cublas tables of this call as "PROBLEM_OPTIONS | CONFIG" lines.
vs_cublas_winners() {
  local f
  for f in "$out"/vs_cublas_*.txt; do
    [[ -e $f ]] || continue
    awk '$1 ~ /^[sdcz]$/ {
      shape = ""; config = ""
      for (i = 2; i <= NF; ++i) {
        if ($i ~ /^[0-9]+x[0-9]+x[0-9]+(x[0-9]+)?$/) shape = $i
        if ($i ~ /^BM[0-9]+_/) config = $i
      }
      if (shape == "" || config == "") next
      split(shape, d, "x")
      printf "-p %s -m %s -n %s -k %s%s | %s\n", $1, d[1], d[2], d[3], \
        (4 in d) ? " --batch " d[4] : "", config
    }' "$f"
  done
}
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
      build/vs_cublas --precision "$2" --seconds "$3" --domain "${VS_DOMAIN:-full}" \
        --set "${VS_SET:-targets}" ${VS_ONLY:+--only "$VS_ONLY"} \
        ${VS_CALIBRATION:+--calibration "$VS_CALIBRATION"} --db "$out/vs_cublas_$2.db" 2>"$out/vs_cublas_$2.err" |
        tee "$out/vs_cublas_$2.txt" || status=1
      build/gemmtune export --db "$out/vs_cublas_$2.db" --output "$out/attempts_$2.csv" || status=1
      rm -f "$out/vs_cublas_$2.db"*
      shift 3 ;;
    sweeps)
      echo "== sweeps of problems $2..$3, $4 s each, sample $5"
      grep -v '^#' bench/sweep_problems.txt | sed -n "$2,$3p" | while read -r args; do
        if ((SECONDS > $6)); then echo "stopping before $args: $SECONDS s used"; break; fi
        # shellcheck disable=SC2086
        build/gemmtune sweep $args --domain "${SWEEP_DOMAIN:-compact}" </dev/null --sample "$5" --seconds "$4" -r 5 \
          --timeout 20 --db "$out/sweeps_$2.db" 2>>"$out/sweeps_$2.err" | tee -a "$out/sweeps_$2.txt"
      done
      shift 6 ;;
    tunes)
      # The hybrid as users run it (full domain), on the same problems as the sweeps.
      echo "== hybrid tunes of problems $2, $3 s each"
      each_problem "$2" "$4" tune_step "$3"
      shift 4 ;;
    exhaustive)
      echo "== exhaustive sweeps of the compact domain, problems $2, each after a $3 s tune"
      each_problem "$2" $(($4 - 60)) exhaustive_step "$3" "$4"
      shift 4 ;;
    capped)
      echo "== hybrid tunes of problems $2, at most 5% of the compact pruned space, $3 s each"
      each_problem "$2" "$4" capped_step "$3"
      shift 4 ;;
    calibrated)
      # The calibration's value to tuning: on problems outside its data, the same small budget
      # of measurements with the uncalibrated and the calibrated model.
      echo "== hybrid tunes of problems $2, $3 measurements each, uncalibrated and with $4"
      each_problem "$2" "$5" calibrated_step "$3" "$4"
      shift 5 ;;
    counters)
      # Shortlists with counters: what `tune --counters` stores, exported as JSON (the CSV
      # format has no counter columns).
      echo "== hybrid tunes of problems $2 with counters, $3 measurements each"
      each_problem "$2" "$4" counters_step "$3"
      build/gemmtune export --db "$out/counters.db" --format json --output "$out/counters.json"
      shift 4 ;;
    profile)
      echo "== profile: counters and energy beside the model"
      build/gemmtune profile -p s -m 4096 -n 4096 -k 4096 --db "$out/profile.db" \
        --config BM128_BN128_BK16_DX32_DY8_DXA64_DYA4_DXB4_DYB64_VA1_VB4_LA1_LB1_PD4_PF3_ST2_UR0_RS8_VS4_ED0 \
        2>&1 | tee "$out/profile_s4096.txt" || status=1
      build/gemmtune profile -p d -m 4096 -n 4096 -k 4096 --db "$out/profile.db" \
        --config BM128_BN128_BK16_DX16_DY16_DXA64_DYA4_DXB16_DYB16_VA2_VB1_LA1_LB0_PD4_PF3_ST2_UR1_RS8_VS1_ED0_MM2 \
        2>&1 | tee "$out/profile_d4096.txt" || status=1
      build/gemmtune profile -p d -m 2048 -n 2048 -k 2048 --db "$out/profile.db" --format json \
        --config BM128_BN64_BK8_DX16_DY8_DXA16_DYA8_DXB8_DYB16_VA1_VB1_LA1_LB1_PD2_PF3_ST2_UR0_RS1_VS1_ED0 \
        >"$out/profile_d2048.json" 2>&1 || status=1
      head -c 1500 "$out/profile_d2048.json"
      build/gemmtune profile -p s -m 4096 -n 4096 -k 4096 --metrics dram__bytes_red.sum \
        --config BM128_BN128_BK16_DX32_DY8_DXA64_DYA4_DXB4_DYB64_VA1_VB4_LA1_LB1_PD4_PF3_ST2_UR0_RS8_VS4_ED0 \
        --db "$out/profile.db" 2>&1 | tail -2
      shift ;;
    ncu)
      echo "== Nsight Compute on the configurations of $2, beside cuBLAS"
      ncu_list "$2"
      shift 2 ;;
    ncu_winners)
      list="$out/ncu_list.txt"
      if [[ $# -gt 1 && -f $2 ]]; then grep -v '^#' "$2" >"$list"; shift; else : >"$list"; fi
      vs_cublas_winners >>"$list"
      echo "== Nsight Compute on $(wc -l <"$list") configurations, beside cuBLAS"
      ncu_list "$list"
      shift ;;
    *) echo "unknown step $1" >&2; exit 2 ;;
  esac
done
exit $status
