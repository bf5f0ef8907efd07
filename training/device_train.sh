#!/bin/bash
# Runs one training chunk on the GPU host (all its GPUs, data parallel), from the repo root:
#   bash training/device_train.sh CHUNK_SECONDS [train.py flags...]
# CHUNK_SECONDS bounds train.py's wall time, its set-up and final validation included (it reserves
# the last mid-chunk validation's duration); the call itself takes about 20 s more (start-up).
# SMOKE=1 first runs a few tiny single-GPU steps and the CPU unit tests (with several GPUs, 10 tiny
# data-parallel steps too), and stops on failure.
# Writes the checkpoint (--ckpt, default training/checkpoints/edgetap-small.pt) and copies it, with the
# log, to $OUT at every save (mid-chunk too, so a call stopped early still hands back the last one). A
# copy over 15 MiB is written as parts NAME.part-aa, -ab, ... because the device hands back at most 8
# files of at most 16 MiB, 64 MiB together (training/edgetap/handback.py); rejoin them with
#   cat NAME.part-* > NAME
# A checkpoint over 56 MiB (L1's with --ema: 86 MB) goes back compacted (FP16 weights and average, no
# AdamW moments); the full one stays on the device for a warm follow-up call.
# The photo bank can travel as one file when the tree and the bank's 731 files no longer fit the
# carry limit together: pack it here with
#   mkdir -p training/.work/pack && tar -C training/.data -czf training/.work/pack/train.tar.gz train
# and carry training/.work/pack (and training/.data/meta.json) instead of training/.data/train; it
# is unpacked here when training/.data/train is absent.
# A cold call that resumes a compacted hand-back (carried in training/.work/resume, copied to the
# --ckpt path by the call's command) needs room: `bash training/travel_light.sh aside` first,
# `bash training/travel_light.sh back` after.
set -o pipefail
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-training/.out}
BANK_PACK=training/.work/pack/train.tar.gz
if [ ! -d training/.data/train ] && [ -f "$BANK_PACK" ]; then
  mkdir -p training/.data && tar -C training/.data -xzf "$BANK_PACK" || exit 1
fi
mkdir -p "$OUT"
NG=$(python3 -c 'import torch; print(torch.cuda.device_count())')
# torchrun would set 1 thread per process; round 5's 2-GPU chunks ran with 8
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(( $(nproc) / (NG > 0 ? NG : 1) ))}
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader
python3 -c 'import torch; print("torch", torch.__version__)'
if [ "${SMOKE:-0}" = 1 ]; then
  python3 training/tests/test_model.py || exit 1
  python3 training/tests/test_synth.py || exit 1
  python3 training/train.py --ckpt /tmp/smoke.pt --batch 2 --frames 8 --tracks 32 --max-steps 3 \
    --val-clips 1 --val-frames 8 --log-every 1 --total-seconds 100 --self-init 0.5 || exit 1
  rm -f /tmp/smoke.pt
  if [ "$NG" -gt 1 ]; then   # the data-parallel path: 10 steps on every GPU, the ranks' weights compared at the end
    torchrun --standalone --nproc_per_node="$NG" training/train.py --ckpt /tmp/smoke_ddp.pt --batch 2 --frames 8 \
      --tracks 32 --max-steps 10 --val-clips 1 --val-frames 8 --log-every 5 --total-seconds 100 --self-init 0.5 \
      --graph-entries --fused-reads || exit 1
    rm -f /tmp/smoke_ddp.pt
  fi
fi
CHUNK=$1; shift
if [ "$NG" -gt 1 ]; then
  torchrun --standalone --nproc_per_node="$NG" training/train.py --out "$OUT" --chunk-seconds "$CHUNK" "$@" 2>&1 | tee "$OUT/train_stdout.log"
else
  python3 training/train.py --out "$OUT" --chunk-seconds "$CHUNK" "$@" 2>&1 | tee "$OUT/train_stdout.log"
fi
exit $?
