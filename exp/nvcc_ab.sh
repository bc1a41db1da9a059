#!/usr/bin/env bash
# A/B of the compiler: the same kernel source compiled by NVRTC (what gemmtune does) and by nvcc
# (-cubin -O3 --std=c++17), each cubin put in a cubin cache under the key gemmtune looks up, so
# `gemmtune measure --cache DIR` runs it beside cuBLAS; alternating twice. exp/nvcc_ab/cases.txt:
# NAME|PROBLEM|CONFIG; exp/nvcc_ab/{nvrtc,nvcc}_NAME hold the caches: `exp/nvcc_ab.sh prepare`
# makes them on the build host (git ignores them: carry them to the device).
set -u
if [[ ${1:-} == prepare ]]; then
  while IFS='|' read -r name prob id; do
    for kind in nvrtc nvcc; do
      rm -rf "exp/nvcc_ab/${kind}_$name"
      build/gemmtune compile $prob --config "$id" --arch sm_90 --cache "exp/nvcc_ab/${kind}_$name" >/dev/null
    done
    build/gemmtune source $prob --config "$id" >"/tmp/nvcc_ab_$name.cu"
    /usr/local/cuda/bin/nvcc -cubin -arch=sm_90 -O3 --std=c++17 "/tmp/nvcc_ab_$name.cu" \
      -o exp/nvcc_ab/nvcc_"$name"/*.cubin
  done <exp/nvcc_ab/cases.txt
  exit 0
fi
for round in 1 2; do
  while IFS='|' read -r name prob id; do
    for kind in nvrtc nvcc; do
      printf '== round %s %s %s: ' "$round" "$kind" "$name"
      build/gemmtune measure $prob -t 0 -r 50 -c "$id" --cache "exp/nvcc_ab/${kind}_$name" \
        </dev/null 2>&1 | grep -E "cuBLAS| ok | wrong" | awk '/cuBLAS/{c=$0; sub(/.*cuBLAS /,"",c); sub(/ \(.*/,"",c); next}{print "cuBLAS", c, "regs", $3, "us", $4, "ratio", $NF}'
    done
  done < exp/nvcc_ab/cases.txt
done
