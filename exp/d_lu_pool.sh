#!/usr/bin/env bash
# D 6144x6080x64: default tune vs compile-top 128 (pool 4096), each winner beside cuBLAS.
set -u
export GEMMTUNE_CACHE=/tmp/gemmtune-cache; mkdir -p $GEMMTUNE_CACHE
P="-p d -m 6144 -n 6080 -k 64"
for ct in 64 128; do
  build/gemmtune tune $P --seconds 90 --compile-top $ct --calibration none --db $OUT/ct$ct.db </dev/null > $OUT/tune_ct$ct.txt 2>&1
  tail -2 $OUT/tune_ct$ct.txt
done
for ct in 64 128; do
  id=$(grep -o "best [A-Z0-9_]*" $OUT/tune_ct$ct.txt | tail -1 | cut -d' ' -f2)
  echo "== compile-top $ct winner $id"
  build/gemmtune measure $P -t 0 -r 20 -c $id </dev/null 2>&1 | tail -5
done
