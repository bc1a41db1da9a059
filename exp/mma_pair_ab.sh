#!/usr/bin/env bash
# A/B of MMA_PAIR_A (session 20; not landed): build/gemmtune built with exp/mma_pair_a.patch (a
# lane's two A rows of an m16 mma adjacent, one 16-byte fragment read, paired C stores) against
# build/gemmtune_base (the binary before it), these DGEMM cases through exp/kernel_ab.sh (runs 2-3
# took 40 repetitions per kernel where kernel_ab.sh takes 50).
lu64=BM192_BN32_BK8_DX16_DY8_DXA32_DYA4_DXB4_DYB32_VA2_VB2_LA1_LB0_PD4_PF0_ST4_UR8_RS8_VS1_ED0
lu128=BM96_BN64_BK8_DX8_DY16_DXA16_DYA8_DXB4_DYB32_VA2_VB2_LA1_LB0_PD4_PF0_ST3_UR4_RS1_VS1_ED0
sq=BM128_BN128_BK32_DX32_DY8_DXA16_DYA16_DXB16_DYB16_VA2_VB1_LA1_LB0_PD4_PF0_ST2_UR0_RS4_VS1_ED0
cases=(
  "-p d -m 6144 -n 6080 -k 64|-t 0 -c ${lu64}_MM2_AC1 ${lu64}_MM3_AC1 ${lu64/PD4/PD2}_MM3_AC1"
  "-p d -m 6144 -n 6016 -k 128|-t 0 -c ${lu128}_MM2_AC1 ${lu128}_MM3_AC1 ${lu128/PD4/PD2}_MM3_AC1"
  "-p d -m 4096 -n 4096 -k 4096|-t 2 -c ${sq}_MM2_AC1 ${sq}_MM3_AC1 ${sq/PD4/PD2}_MM3_AC1"
  "-p d -m 8192 -n 8192 -k 8192|-t 2"
)
exec "$(dirname "$0")/kernel_ab.sh" "${cases[@]}"
