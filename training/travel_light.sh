#!/bin/bash
# Sets aside the tracked files a training call on the GPU host does not read, so that a resume
# checkpoint (36 MB for the grown large network, compacted) fits the device's 64 MiB carry beside
# the tree and the packed photo bank:
#   bash training/travel_light.sh aside   # before the device call
#   bash training/travel_light.sh back    # right after it
# They wait in training/.work/aside/ (git-ignored, so they do not travel). The device copies the
# working tree as it is: set aside, these files (44.6 MB of the tree's 51.9) stay here.
# Run from the repo root. `aside` refuses when files already wait there; `back` refuses when a file it
# would restore exists in the tree (then compare and move it by hand).
set -euo pipefail
STORE=training/.work/aside
FILES=(models/edgetap-large.safetensors models/edgetap-small.safetensors
       training/checkpoints/edgetap-large.pt training/checkpoints/edgetap-small.pt)
FILES+=(tests/data/golden/*.safetensors)

case "${1:-}" in
  aside)
    if [ -d "$STORE" ] && [ -n "$(find "$STORE" -type f | head -1)" ]; then
      echo "travel_light.sh: $STORE already holds files; run 'back' first" >&2; exit 1
    fi
    for f in "${FILES[@]}"; do
      [ -f "$f" ] || { echo "travel_light.sh: $f is missing from the tree" >&2; exit 1; }
    done
    for f in "${FILES[@]}"; do
      mkdir -p "$STORE/$(dirname "$f")" && mv "$f" "$STORE/$f"
    done
    echo "set aside ${#FILES[@]} files; tracked tree now $(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1) bytes"
    ;;
  back)
    [ -d "$STORE" ] || { echo "travel_light.sh: nothing set aside ($STORE is absent)" >&2; exit 1; }
    ( cd "$STORE" && find . -type f ) | while read -r f; do
      f=${f#./}
      [ -e "$f" ] && { echo "travel_light.sh: $f exists in the tree; left in $STORE" >&2; exit 1; }
      mkdir -p "$(dirname "$f")" && mv "$STORE/$f" "$f"
    done
    find "$STORE" -type d -empty -delete
    git status --short -- models training/checkpoints tests/data/golden
    ;;
  *)
    echo "usage: bash training/travel_light.sh aside|back" >&2; exit 2
    ;;
esac
