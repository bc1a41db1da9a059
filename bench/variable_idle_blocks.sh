#!/usr/bin/env bash
# On the GPU machine: what the variable-size batch's blocks cost where they lie outside their
# matrix. Per precision (s, d) and largest size (128: 5,000 matrices; 512: 2,000), the model's 3
# kernels for a batch of sizes uniform in [1, largest] (seed 3; the first matrix the largest),
# then the same kernels on the same grid with every other matrix 1x1x1 ("idle": almost every
# block outside its matrix) and on the largest matrix alone ("one"). Each row: precision,
# largest, batch, configuration, status, median us (`gemmtune measure --batch-kind variable
# --sizes FILE`: every matrix verified against FP64, then timed).
#   bench/variable_idle_blocks.sh [GEMMTUNE]   (default build/gemmtune)
set -euo pipefail
bin=$(realpath "${1:-$(dirname "$0")/../build/gemmtune}")
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$dir" <<'PY'
import random, sys
random.seed(3)
for largest, count in [(128, 5000), (512, 2000)]:
    uniform = [(random.randint(1, largest), random.randint(1, largest), random.randint(1, largest))
               for _ in range(count)]
    uniform[0] = idle_first = (largest, largest, largest)
    batches = {"uniform": uniform, "idle": [idle_first] + [(1, 1, 1)] * (count - 1),
               "one": [idle_first]}
    for name, shapes in batches.items():
        with open(f"{sys.argv[1]}/{name}{largest}.txt", "w") as f:
            f.writelines(f"{m} {n} {k}\n" for m, n, k in shapes)
PY
for largest in 128 512; do
  for p in s d; do
    "$bin" measure -p "$p" -m "$largest" -n "$largest" -k "$largest" --batch-kind variable \
      --sizes "$dir/uniform$largest.txt" --top 3 >"$dir/out.txt"
    awk -v t="$p $largest uniform" '$1 ~ /^BM/ {print t, $1, $2, $4}' "$dir/out.txt"
    mapfile -t configs < <(awk '$1 ~ /^BM/ {print "--config"; print $1}' "$dir/out.txt")
    for batch in idle one; do
      "$bin" measure -p "$p" -m "$largest" -n "$largest" -k "$largest" --batch-kind variable \
        --sizes "$dir/$batch$largest.txt" "${configs[@]}" --top 0 >"$dir/out.txt"
      awk -v t="$p $largest $batch" '$1 ~ /^BM/ {print t, $1, $2, $4}' "$dir/out.txt"
    done
  done
done
