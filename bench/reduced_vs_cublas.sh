#!/usr/bin/env bash
# On the GPU machine: FP16, BF16 and TF32 GEMM against cuBLAS (cublasGemmStridedBatchedEx, same
# input and compute types) on large squares, a skinny K, an odd size and a short K. Per problem:
# `gemmtune tune --seconds S` on a fresh store, then one `gemmtune measure` of the tune's best
# and the model's zero-run pick (--top 1), each verified against FP64 and timed beside cuBLAS in
# the same run.
# Rows: problem, cuBLAS us, tuned us, tuned x cuBLAS, pick us, pick x cuBLAS, tune's best config.
#   bench/reduced_vs_cublas.sh [SECONDS] [GEMMTUNE] [PROBLEMS]
# (defaults 30, build/gemmtune, the list below; PROBLEMS: a file of such lines, for a subset)
set -euo pipefail
seconds="${1:-30}"
bin=$(realpath "${2:-$(dirname "$0")/../build/gemmtune}")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The default problems: large squares, a short K, an odd size and a skinny K.
default_problems="h t n 4096 4096 4096
h t n 8192 8192 8192
b t n 4096 4096 4096
b t n 8192 8192 8192
h n n 8192 8192 64
h t n 4097 4097 4097
h t n 6144 6016 128
t t n 8192 8192 8192"
if [[ -n "${3:-}" ]]; then problems=$(<"$3"); else problems=$default_problems; fi
while read -r p opa opb m n k; do
  args=(-p "$p" --opa "$opa" --opb "$opb" -m "$m" -n "$n" -k "$k")
  best=$("$bin" tune "${args[@]}" --seconds "$seconds" --db "$dir/$p$m$n$k.db" 2>&1 |
    awk '/: best BM/ {print $NF}')
  "$bin" measure "${args[@]}" --config "$best" --top 1 --db "$dir/none.db" >"$dir/out.txt"
  awk -v id="$p $opa$opb ${m}x${n}x${k}" '
    / cuBLAS / {for (i = 1; i <= NF; ++i) if ($i == "cuBLAS") cublas = $(i + 1)}
    $1 ~ /^BM/ {us[++r] = $4; x[r] = $NF; cfg[r] = $1}
    END {printf "%s cublas %s tuned %s %s pick %s %s %s\n", id, cublas, us[1], x[1], us[2], x[2], cfg[1]}' \
    "$dir/out.txt"
done <<<"$problems"
