#!/usr/bin/env bash
# A/B on the device: old binaries (build-old/, copied there with their libnlopt and libsqlite3
# .so files) against new ones (build/) on the same configurations, each in its own process with
# its own compile cache; prints registers, measured us and the ratio to cuBLAS per line.
#   exp/ab.sh PRECISION IDS_FILE -m M -n N -k K
set -euo pipefail
precision=$1
ids=$2
shift 2
mapfile -t configs <"$ids"
for b in build-old build; do
  echo "== $b $precision $*"
  "$b/gemmtune" measure -p "$precision" "$@" -t 0 -r 20 --cache "/tmp/cache-$b" -c "${configs[@]}" 2>&1 |
    tail -n +3 | awk '{print $3, $4, $NF}'
done
