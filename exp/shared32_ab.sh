#!/usr/bin/env bash
# SL0 against SL1 (64- or 32-bit shared addresses for the SIMT vector fragment loads): each case's
# configurations measured in both forms in one `gemmtune measure` call beside cuBLAS, twice.
# A case is "PROBLEM_OPTIONS|IDS" (comma-separated) or "PROBLEM_OPTIONS|top N" (the calibrated
# model's top N SIMT kernels with vector fragment loads, best of each tile family). Session 19.
set -u
export GEMMTUNE_CACHE=/tmp/gemmtune-cache; mkdir -p $GEMMTUNE_CACHE
cases=(
  "-p s -m 4096 -n 4096 -k 4096|BM256_BN128_BK32_DX16_DY16_DXA64_DYA4_DXB16_DYB16_VA4_VB1_LA1_LB1_PD4_PF0_ST3_UR0_RS1_VS4_ED0_AC1_VC1"
  "-p s -m 1000 -n 1000 -k 1000|BM128_BN64_BK32_DX32_DY8_DXA16_DYA16_DXB8_DYB32_VA4_VB1_LA1_LB1_PD4_PF0_ST3_UR0_RS2_VS4_ED0_AC1_VC1"
  "-p s -m 4097 -n 4097 -k 4097|BM96_BN128_BK16_DX8_DY16_DXA32_DYA4_DXB16_DYB8_VA1_VB1_LA1_LB1_PD4_PF0_ST2_UR0_RS1_VS4_ED0_AC1"
  "-p s -m 6144 -n 6016 -k 128|top 3"
  "-p s -m 6144 -n 6080 -k 64|top 3"
  "-p s -m 8192 -n 8192 -k 8192|top 2"
  "-p s --opb t -m 2048 -n 2048 -k 2048|top 2"
  "-p c -m 1024 -n 1024 -k 1024|top 2"
)
for c in "${cases[@]}"; do
  problem=${c%%|*} ids=${c#*|}
  if [[ $ids == top* ]]; then
    ids=$(build/gemmtune predict $problem -t 400 -f csv --shortlist --calibration calibrations/H100-SXM.json |
      cut -d, -f2 | grep 'VS[24]' | grep -v '_MM' | head -n "${ids#top }" | paste -sd,)
  fi
  ids=${ids//_SL1/}
  both="${ids//,/ } $(echo "$ids" | sed 's/,/_SL1 /g')_SL1"
  for round in 1 2; do
    echo "== round $round $problem"
    build/gemmtune measure $problem -t 0 -c $both -r 50 </dev/null 2>&1
  done
done
