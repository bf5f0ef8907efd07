#!/bin/bash
# A trained checkpoint through the large model's ship rule, as it would be published: exported
# (FP16 weights, template refinement and the shipped model's support grid declared, rule `vis`)
# outside the tree, then scored
#   1. evaluate.py on gen, badja, pairs and val at 256 px   -> training/results/eval_NAME_published.json
#   2. evaluate.py on BADJA at 768x448                       -> ..._published_badja768x448.json
#   3. the C++ engine (`edgetap eval`) on pairs, BADJA and synth-eval-v1 -> eval_cpp_NAME_published.json
# and compared with the shipped version's three files by training/ship_check.py (its exit status
# is this script's). From the repo root, after `cmake --build --preset cpu` and with synth-eval-v1
# generated (models/README.md), about 20 min on 2 CPU cores without a support grid; with edgetap-large's
# 16 x 16 one longer (v6: its generated set 943 s against 173 s, its validation set 881 s against 290 s):
#   bash training/candidate_eval.sh training/checkpoints/edgetap-large-r30.pt r30-step1805 [--ema]
# SHIPPED (default edgetap-large-v6) names the shipped files: eval_${SHIPPED}_published*.json;
# SUPPORT (default: models/edgetap-large.json's support_grid) the candidate's support grid.
set -euo pipefail
CKPT=${1:?usage: candidate_eval.sh CKPT NAME [--ema]}
NAME=${2:?usage: candidate_eval.sh CKPT NAME [--ema]}
EMA=${3:-}
SHIPPED=${SHIPPED:-edgetap-large-v6}
PY=${PYTHON:-python3}
EDGETAP=${EDGETAP:-build/cpu/cli/edgetap}
EVAL_ROOT=${EVAL_ROOT:-../shared/data/eval}
SYNTH=${SYNTH:-build/eval-data/synth-eval-v1}
R=training/results
WORK=training/.work/candidate/$NAME

need() { [ -e "$1" ] || { echo "candidate_eval.sh: $1 is missing ($2)" >&2; exit 2; }; }
need "$CKPT" "the checkpoint to evaluate"
need "$EDGETAP" "build it: cmake --preset cpu && cmake --build --preset cpu"
need "$EVAL_ROOT/badja" "the evaluation sets (../shared/data/eval)"
need "$SYNTH" "generate it: models/README.md, synth-eval-v1"
for f in "$R/eval_${SHIPPED}_published.json" "$R/eval_${SHIPPED}_published_badja768x448.json" \
         "$R/eval_cpp_${SHIPPED}_published.json"; do need "$f" "the shipped version's results"; done
SUPPORT=${SUPPORT:-$($PY -c 'import json; print(json.load(open("models/edgetap-large.json")).get("support_grid", 0))')}
case "$EMA" in ""|--ema) ;; *) echo "candidate_eval.sh: third argument must be --ema, not '$EMA'" >&2; exit 2 ;; esac

mkdir -p "$WORK/models" "$WORK/golden"
$PY training/export.py --ckpt "$CKPT" $EMA --name edgetap-large --models "$WORK/models" --golden "$WORK/golden" \
    --version "$NAME" --weights-dtype F16 --refinement default --visible-rule vis --support-grid "$SUPPORT"
WEIGHTS=$WORK/models/edgetap-large.safetensors
$PY training/evaluate.py --weights "$WEIGHTS" --sets gen,badja,pairs,val --out "$R/eval_${NAME}_published.json"
$PY training/evaluate.py --weights "$WEIGHTS" --sets badja --size 768x448 --eval-root "$EVAL_ROOT" \
    --out "$R/eval_${NAME}_published_badja768x448.json"
"$EDGETAP" eval --tracker edgetap --model "$WEIGHTS" "$EVAL_ROOT/pairs" "$EVAL_ROOT/badja" "$SYNTH" \
    --quiet --json "$R/eval_cpp_${NAME}_published.json"
$PY training/ship_check.py \
    --candidate "$R/eval_${NAME}_published.json" "$R/eval_${NAME}_published_badja768x448.json" \
                "$R/eval_cpp_${NAME}_published.json" \
    --shipped "$R/eval_${SHIPPED}_published.json" "$R/eval_${SHIPPED}_published_badja768x448.json" \
              "$R/eval_cpp_${SHIPPED}_published.json"
