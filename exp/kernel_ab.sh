#!/usr/bin/env bash
# A/B of a kernel-template change: build/gemmtune (with it) against build/gemmtune_base (a copy
# of the binary before it), the same configurations beside cuBLAS, alternating twice. Kernels are
# cached by source, so the two binaries never share a cubin. Used for session 18's runs 4-5.
# Arguments, if any, replace the cases below: each "PROBLEM_OPTIONS|MEASURE_OPTIONS".
set -u
export GEMMTUNE_CACHE=/tmp/gemmtune-cache; mkdir -p $GEMMTUNE_CACHE
cases=(
  "-p d -m 6144 -n 6080 -k 64|-t 0 -c BM192_BN32_BK8_DX16_DY8_DXA32_DYA4_DXB4_DYB32_VA2_VB2_LA1_LB0_PD4_PF0_ST4_UR4_RS8_VS1_ED0_MM2_AC1"
  "-p d -m 6144 -n 6016 -k 128|-t 0 -c BM96_BN64_BK8_DX8_DY16_DXA16_DYA8_DXB4_DYB32_VA2_VB2_LA1_LB0_PD4_PF0_ST3_UR2_RS1_VS1_ED0_MM2_AC1"
  "-p d -m 4096 -n 4096 -k 4096|-t 2"
  "-p s -m 4096 -n 4096 -k 4096|-t 0 -c BM256_BN128_BK32_DX16_DY16_DXA64_DYA4_DXB16_DYB16_VA4_VB1_LA1_LB1_PD4_PF0_ST3_UR0_RS1_VS4_ED0_AC1_VC1"
  "-p s -m 1000 -n 1000 -k 1000|-t 0 -c BM128_BN64_BK32_DX32_DY8_DXA16_DYA16_DXB8_DYB32_VA4_VB1_LA1_LB1_PD4_PF0_ST3_UR0_RS2_VS4_ED0_AC1_VC1"
  "-p s -m 6144 -n 6016 -k 128|-t 3"
  "-p s -m 6144 -n 6080 -k 64|-t 2"
  "-p s -m 8192 -n 8192 -k 32|-t 2"
  "-p s -m 4097 -n 4097 -k 4097|-t 0 -c BM96_BN128_BK16_DX8_DY16_DXA32_DYA4_DXB16_DYB8_VA1_VB1_LA1_LB1_PD4_PF0_ST2_UR0_RS1_VS4_ED0_AC1"
  "-p s --opb t -m 2048 -n 2048 -k 2048|-t 2"
  "-p c -m 1024 -n 1024 -k 1024|-t 2"
)
(($# > 0)) && cases=("$@")
for round in 1 2; do
  for bin in gemmtune_base gemmtune; do
    for c in "${cases[@]}"; do
      echo "== round $round $bin ${c%%|*}"
      # shellcheck disable=SC2086
      build/$bin measure ${c%%|*} ${c#*|} -r 50 </dev/null 2>&1 | grep -v "^config"
    done
  done
done
