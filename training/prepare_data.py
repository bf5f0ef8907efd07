#!/usr/bin/env python3
"""Builds training/.data: shrunken copies of the texture and evaluation material.

Needs only python3 with numpy and PIL (Debian: python3-numpy python3-pil); no torch. The
extra Debian packages (EXTRA_TRAIN_PACKAGES) must be installed: apt-get install ukui-wallpapers
gnome-backgrounds lxqt-themes xfdesktop4-data mate-backgrounds.
The result (~25 MB) travels to the GPU host with the working tree (`carry`), so
everything is pre-scaled to what the trainer and the evaluator actually use:

  .data/train/bg/*.jpg       training backgrounds: photo_* 512x512 crops; pattern_* tiles at native size
  .data/train/stamps/*.png   photo cut-outs with alpha, longest side 128 px
  .data/train/sources.txt    every file used, with its package
  .data/reserved/*.jpg       RESERVED photos (evaluation only), 512x512 crops
  .data/eval/<set>/<seq>/    evaluation sequences: frames resized to 256x256, gt.json unchanged

Reserved material (never written under .data/train): DAVIS / BADJA frames, the image pairs,
and the photos of plasma-workspace-wallpapers, lomiri-wallpapers-20.04, libjxl-testdata, opencv-doc.

Usage: python3 training/prepare_data.py [--shared ../shared] [--out training/.data]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
from PIL import Image

BG_SIZE = 512
STAMP_SIZE = 128
EVAL_SIZE = 256
TRAIN_PHOTO_DIRS = ["wallpaper-photos-mate", "skimage", "matplotlib"]
# Extra non-reserved Debian photo packages added to training (listed in models/README.md); new
# ones go at the end, so that the photo numbers, and with them the validation backgrounds
# (photobanks.VAL_BG), stay what they were. gnome-backgrounds, lxqt-themes and xfdesktop4-data add
# flat, low-texture artwork; mate-backgrounds abstract desktop artwork (its nature photos are
# shared/textures/wallpaper-photos-mate, already above, so PACKAGE_SKIP leaves them out).
EXTRA_TRAIN_PACKAGES = ["ukui-wallpapers", "gnome-backgrounds", "lxqt-themes", "xfdesktop4-data", "mate-backgrounds"]
PACKAGE_SKIP = {"mate-backgrounds": "/nature/"}
# crops of these packages flatter than MAX_FLAT (flat_fraction) are left out: desktop artwork
# with solid-colour areas. The sets before them are kept whole (the validation backgrounds are
# among them).
FLAT_CHECKED = ("debian:gnome-backgrounds", "debian:lxqt-themes", "debian:xfdesktop4-data",
                "debian:mate-backgrounds")
MAX_FLAT = 0.9
RESERVED_PACKAGES = ["lomiri-wallpapers-20.04", "plasma-workspace-wallpapers"]
RESERVED_NAMES = ("plasma", "lomiri", "libjxl", "opencv-doc", "davis", "badja")


def package_images(pkg):
    """Image files installed by a Debian package (largest variant per wallpaper folder)."""
    try:
        out = subprocess.run(["dpkg", "-L", pkg], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        print(f"warning: package {pkg} not installed (apt-get install {pkg})", file=sys.stderr)
        return []
    files = [f for f in out.split("\n") if f.lower().endswith((".jpg", ".jpeg", ".png", ".webp"))
             and "screenshot" not in f and "images_dark" not in f and os.path.isfile(f)
             and ("/backgrounds/" in f or "/wallpapers/" in f)]     # not a theme's buttons and previews
    # plasma: <Name>/contents/images/<W>x<H>.jpg, mate: <Name>.jpg and <Name>_<W>x<H>.jpg -> keep
    # the largest per <Name>
    best = {}
    for f in files:
        key = f.split("/contents/")[0] if "/contents/" in f else re.sub(r"_\d+x\d+(?=\.\w+$)", "", f)
        size = os.path.getsize(f)
        if key not in best or size > best[key][0]:
            best[key] = (size, f)
    return sorted(v[1] for v in best.values())


def square_crops(im, size, max_crops=2):
    """Resize the short side to `size` and take up to `max_crops` square crops along the long side."""
    im = im.convert("RGB")
    w, h = im.size
    s = size / min(w, h)
    im = im.resize((max(size, round(w * s)), max(size, round(h * s))), Image.LANCZOS)
    w, h = im.size
    n = 1 if max(w, h) < 1.3 * size else max_crops
    crops = []
    for i in range(n):
        f = 0.5 if n == 1 else i / (n - 1)
        x0 = round((w - size) * f) if w > h else 0
        y0 = round((h - size) * f) if h >= w else 0
        crops.append(im.crop((x0, y0, x0 + size, y0 + size)))
    return crops


def flat_fraction(im):
    """Share of an image's 9x9 neighbourhoods (at 256 px) whose mean grey-level gradient is
    below 1.5 levels per pixel: where a point has nothing to be tracked by."""
    g = np.asarray(im.convert("L").resize((256, 256), Image.BILINEAR), np.float32)
    grad = np.abs(np.diff(g, axis=1))[:-1] + np.abs(np.diff(g, axis=0))[:, :-1]
    n = grad.shape[0] // 9
    boxes = grad[:n * 9, :n * 9].reshape(n, 9, n, 9).mean((1, 3))
    return float((boxes < 1.5).mean())


def prep_train(shared, out, sources):
    bg_dir = os.path.join(out, "train", "bg")
    os.makedirs(bg_dir, exist_ok=True)
    tex = os.path.join(shared, "data", "textures")
    n = 0
    photos = []
    for d in TRAIN_PHOTO_DIRS:
        for f in sorted(os.listdir(os.path.join(tex, d))):
            photos.append((os.path.join(tex, d, f), f"shared/textures/{d}"))
    for pkg in EXTRA_TRAIN_PACKAGES:
        for f in package_images(pkg):
            if any(r in f.lower() for r in RESERVED_NAMES):
                # e.g. lxqt-themes' kde-plasma.png: artwork that may come from a reserved package
                print(f"skipped (name of reserved material): {f}")
                continue
            if pkg in PACKAGE_SKIP and PACKAGE_SKIP[pkg] in f:
                continue
            photos.append((f, f"debian:{pkg}"))
    for path, src in photos:
        assert not any(r in path.lower() for r in RESERVED_NAMES), path
        for i, c in enumerate(square_crops(Image.open(path), BG_SIZE)):
            if src in FLAT_CHECKED and flat_fraction(c) > MAX_FLAT:
                print(f"skipped (no texture over {MAX_FLAT:.0%} of it): crop {i} of {path}")
                continue
            name = f"photo_{n:03d}_{i}.jpg"
            c.save(os.path.join(bg_dir, name), quality=92)
            sources.append(f"train/bg/{name}\t{src}\t{path}")
        n += 1
    pat_root = os.path.join(tex, "gimp-patterns-png")
    k = 0
    for root, _, files in sorted(os.walk(pat_root)):
        for f in sorted(files):
            im = Image.open(os.path.join(root, f))
            if min(im.size) < 24:
                continue  # 1-D stripes make untrackable backgrounds
            # stored at native size; the loader tiles it to BG_SIZE (see synth.load_banks)
            name = f"pattern_{k:03d}.jpg"
            im.convert("RGB").save(os.path.join(bg_dir, name), quality=92)
            sources.append(f"train/bg/{name}\tshared/textures/gimp-patterns-png\t{os.path.join(root, f)}")
            k += 1
    st_dir = os.path.join(out, "train", "stamps")
    os.makedirs(st_dir, exist_ok=True)
    st_root = os.path.join(tex, "tuxpaint-photo-stamps")
    k = 0
    for root, _, files in sorted(os.walk(st_root)):
        for f in sorted(files):
            if not f.endswith(".png"):
                continue
            im = Image.open(os.path.join(root, f)).convert("RGBA")
            s = STAMP_SIZE / max(im.size)
            im = im.resize((max(8, round(im.size[0] * s)), max(8, round(im.size[1] * s))), Image.LANCZOS)
            name = f"stamp_{k:03d}.png"
            im.save(os.path.join(st_dir, name))
            sources.append(f"train/stamps/{name}\tshared/textures/tuxpaint-photo-stamps\t{os.path.join(root, f)}")
            k += 1
    print(f"train: {n} photos, backgrounds in {bg_dir}, {k} stamps")


def prep_reserved(out, sources):
    d = os.path.join(out, "reserved")
    os.makedirs(d, exist_ok=True)
    n = 0
    for pkg in RESERVED_PACKAGES:
        for path in package_images(pkg):
            c = square_crops(Image.open(path), BG_SIZE, max_crops=1)[0]
            name = f"reserved_{n:03d}.jpg"
            c.save(os.path.join(d, name), quality=92)
            sources.append(f"reserved/{name}\tdebian:{pkg}\t{path}")
            n += 1
    print(f"reserved (evaluation only): {n} photos")


def prep_eval(shared, out):
    for kind in ("badja", "pairs"):
        root = os.path.join(shared, "data", "eval", kind)
        for seq in sorted(os.listdir(root)):
            src = os.path.join(root, seq)
            dst = os.path.join(out, "eval", kind, seq)
            os.makedirs(os.path.join(dst, "frames"), exist_ok=True)
            shutil.copy(os.path.join(src, "gt.json"), os.path.join(dst, "gt.json"))
            frames = sorted(os.listdir(os.path.join(src, "frames")))
            for i, f in enumerate(frames):
                im = Image.open(os.path.join(src, "frames", f)).convert("RGB")
                im = im.resize((EVAL_SIZE, EVAL_SIZE), Image.BILINEAR)
                # pairs are 2 frames: keep them lossless; videos as high-quality JPEG
                if kind == "pairs":
                    im.save(os.path.join(dst, "frames", f"{i:05d}.png"))
                else:
                    im.save(os.path.join(dst, "frames", f"{i:05d}.jpg"), quality=92)
            print(f"eval {kind}/{seq}: {len(frames)} frames")


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--shared", default=os.path.join(here, "..", "..", "shared"))
    ap.add_argument("--out", default=os.path.join(here, ".data"))
    args = ap.parse_args()
    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    sources = []
    prep_train(args.shared, args.out, sources)
    prep_reserved(args.out, sources)
    prep_eval(args.shared, args.out)
    with open(os.path.join(args.out, "sources.txt"), "w") as f:
        f.write("\n".join(sources) + "\n")
    with open(os.path.join(args.out, "meta.json"), "w") as f:
        json.dump({"bg_size": BG_SIZE, "stamp_size": STAMP_SIZE, "eval_size": EVAL_SIZE}, f)


if __name__ == "__main__":
    main()
