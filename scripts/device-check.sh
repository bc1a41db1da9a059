#!/usr/bin/env bash
# shellcheck disable=SC2317  # the steps are called through "${step}_step"
# On the lent GPU machine, from the repository root, with build/ carried from the build host:
# steps run in order, logs and stores under $OUT (default /tmp/gemmtune-device).
#   scripts/device-check.sh [STEP [FLAGS...]]...        (no step: tests, then vs_cublas)
# Steps:
#   tests                   the [gpu] tests (build/gemmtune_gpu_tests)
#   vs_cublas FLAGS...      bench/vs_cublas with its own flags (--precision s|d|sd, --seconds,
#                           --only NAMES, --set targets|wins|all|batched (batched: any of
#                           --precision sdcz), --domain, --calibration FILE);
#                           every attempt exported to attempts_PRECISION.csv
#   sweep --lines L         per line of bench/sweep_problems.txt (L: "3,5,9" or "3-9"): a sweep of
#                           the domain (--domain, default compact; 5 repetitions each) into
#                           sweep.db, sampled (--sample N, for at most --seconds-each S) or
#                           whole; --tune-seconds S first tunes it from an empty compile cache
#                           (its wall time is the user's) into sweep_tunes.db
#   tune --lines L          per line, a hybrid tune of the compact domain from an empty compile
#                           cache into tune.db: --seconds-each S, --evaluations N or --cap (5% of
#                           the pruned space), --calibration FILE (also tuned uncalibrated, the
#                           same budget), --counters (exported to counters.json)
#   ncu [LIST] [--winners]  Nsight Compute on each "PROBLEM_OPTIONS | CONFIG" line of LIST beside
#                           cuBLAS, and with --winners on this call's vs_cublas winners (ncu.tgz)
# sweep and tune start no problem after --stop-after S seconds of this script (default 540).
set -uo pipefail
out="${OUT:-/tmp/gemmtune-device}"
mkdir -p "$out"
export GEMMTUNE_CACHE=/tmp/gemmtune-cache
mkdir -p "$GEMMTUNE_CACHE"
cd "$(dirname "$0")/.." || exit 2
steps="tests vs_cublas sweep tune ncu"
is_step() { [[ " $steps " == *" $1 "* ]]; }

# Lines L of bench/sweep_problems.txt, comments left out.
problem_lines() {
  local range=${1//-/,}
  [[ $1 == *-* ]] && range="$(seq -s, "${1%-*}" "${1#*-}")"
  grep -v '^#' bench/sweep_problems.txt | sed -n "${range//,/p;}p"
}
# A hybrid tune of the compact domain from an empty compile cache, so that its wall time is what
# a user's first run pays; its cubins then warm the shared cache. fresh_tune LOG OPTIONS...
fresh_tune() {
  local log=$1 fresh
  shift
  fresh=$(mktemp -d)
  GEMMTUNE_CACHE=$fresh /usr/bin/time -f "  wall %e s" build/gemmtune tune "$@" --domain compact \
    </dev/null 2>&1 | tee -a "$log"
  cp -n "$fresh"/* "$GEMMTUNE_CACHE"/ 2>/dev/null
  rm -rf "$fresh"
}

# Problem options are split into words on purpose (shellcheck SC2086) in the steps below.
# shellcheck disable=SC2086
sweep_step() {
  local args
  problem_lines "${flag[lines]}" | while read -r args; do
    if ((SECONDS > ${flag[stop-after]})); then echo "stopping before $args: $SECONDS s used"; break; fi
    if [[ ${flag[tune-seconds]:-0} != 0 ]]; then
      fresh_tune "$out/sweep_tunes.txt" $args --seconds "${flag[tune-seconds]}" \
        --calibration none --db "$out/sweep_tunes.db"
    fi
    local budget=$((${flag[stop-after]} + 60 - SECONDS)) sample=()
    [[ -n ${flag[sample]:-} ]] && sample=(--sample "${flag[sample]}") budget=${flag[seconds-each]}
    build/gemmtune sweep $args --domain "${flag[domain]:-compact}" "${sample[@]}" \
      --seconds "$budget" -r 5 --timeout 20 --db "$out/sweep.db" </dev/null \
      2>>"$out/sweep.err" | tee -a "$out/sweep.txt"
  done
}

# shellcheck disable=SC2086
tune_step() {
  local args calibration budget
  problem_lines "${flag[lines]}" | while read -r args; do
    if ((SECONDS > ${flag[stop-after]})); then echo "stopping before $args: $SECONDS s used"; break; fi
    budget=()
    [[ -n ${flag[seconds-each]:-} ]] && budget+=(--seconds "${flag[seconds-each]}")
    [[ -n ${flag[evaluations]:-} ]] && budget+=(--evaluations "${flag[evaluations]}")
    [[ -n ${flag[cap]:-} ]] && budget+=(--cap 5)
    [[ -n ${flag[counters]:-} ]] && budget+=(--counters)
    for calibration in none ${flag[calibration]:-}; do
      echo "$args --calibration $calibration" | tee -a "$out/tune.txt"
      fresh_tune "$out/tune.txt" $args "${budget[@]}" --calibration "$calibration" \
        --db "$out/tune_$(basename "$calibration" .json).db"
    done
  done
  if [[ -n ${flag[counters]:-} ]]; then
    build/gemmtune export --db "$out/tune_none.db" --format json --output "$out/counters.json"
  fi
}

# Nsight Compute on each "PROBLEM_OPTIONS | CONFIG" line of a list beside cuBLAS. The stall
# reasons are named metrics: the sections' csv pages leave their breakdown out.
ncu_list() {
  local n=0 args config stall_metrics
  stall_metrics=$(printf 'smsp__warp_issue_stalled_%s_per_warp_active.pct,' barrier \
    long_scoreboard short_scoreboard mio_throttle math_pipe_throttle wait not_selected \
    dispatch_stall no_instruction lg_throttle branch_resolving)
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
# The winners of this call's vs_cublas tables as "PROBLEM_OPTIONS | CONFIG" lines.
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

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
} >"$out/device.txt" 2>&1
cat "$out/device.txt"
[[ $# -eq 0 ]] && set -- tests vs_cublas --precision sd --seconds 20
status=0
while [[ $# -gt 0 ]]; do
  step=$1
  shift
  if ! is_step "$step"; then echo "unknown step '$step' (steps: $steps)" >&2; exit 2; fi
  # The step's words up to the next step: --name value pairs (a flag alone is "1"), or
  # vs_cublas's own arguments, or ncu's list.
  words=()
  while [[ $# -gt 0 ]] && ! is_step "$1"; do words+=("$1"); shift; done
  declare -A flag=([stop-after]=540)
  list=""
  if [[ $step != vs_cublas ]]; then
    for ((i = 0; i < ${#words[@]}; ++i)); do
      w=${words[i]}
      if [[ $w != --* ]]; then list=$w; continue; fi
      if ((i + 1 < ${#words[@]})) && [[ ${words[i + 1]} != --* ]]; then
        flag[${w#--}]=${words[i + 1]}
        i=$((i + 1))
      else
        flag[${w#--}]=1
      fi
    done
  fi
  case "$step" in
    tests)
      echo "== gpu tests"
      build/gemmtune_gpu_tests --durations yes >"$out/gpu_tests.log" 2>&1 || status=1
      grep -E "passed|failed|FAILED|us$|s: gpu" "$out/gpu_tests.log" | tail -20 ;;
    vs_cublas)
      echo "== vs_cublas ${words[*]}"
      name="vs_cublas_$SECONDS"
      build/vs_cublas "${words[@]}" --db "$out/$name.db" 2>"$out/$name.err" |
        tee "$out/$name.txt" || status=1
      build/gemmtune export --db "$out/$name.db" --output "$out/attempts_$name.csv" || status=1
      rm -f "$out/$name.db"* ;;
    sweep | tune)
      if [[ -z ${flag[lines]:-} ]]; then echo "$step needs --lines" >&2; exit 2; fi
      echo "== $step of lines ${flag[lines]} of bench/sweep_problems.txt"
      "${step}_step" ;;
    ncu)
      echo "== Nsight Compute beside cuBLAS"
      : >"$out/ncu_list.txt"
      [[ -n $list ]] && grep -v '^#' "$list" >>"$out/ncu_list.txt"
      [[ -n ${flag[winners]:-} ]] && vs_cublas_winners >>"$out/ncu_list.txt"
      ncu_list "$out/ncu_list.txt" ;;
  esac
  unset flag
done
exit $status
