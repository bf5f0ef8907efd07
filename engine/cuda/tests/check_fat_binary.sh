#!/usr/bin/env bash
# Checks that a CUDA program holds machine code (N-real) and PTX (N-virtual)
# for every architecture of the project's list (cmake/EdgetapCuda.cmake).
#   usage: check_fat_binary.sh CUOBJDUMP PROGRAM "75-real;86-real;...;90-virtual"
set -euo pipefail
cuobjdump="$1" program="$2" archs="$3"
elf=$("$cuobjdump" --list-elf "$program")
ptx=$("$cuobjdump" --list-ptx "$program")
status=0
IFS=';' read -ra list <<<"$archs"
for arch in "${list[@]}"; do
  number="${arch%%-*}"
  case "$arch" in
    *-virtual) grep -q "sm_${number}\b" <<<"$ptx" || { echo "no PTX for compute_${number} in $program"; status=1; } ;;
    *-real | *) grep -q "sm_${number}\b" <<<"$elf" || { echo "no sm_${number} machine code in $program"; status=1; } ;;
  esac
done
[ $status -eq 0 ] && echo "$program holds ${archs}"
exit $status
