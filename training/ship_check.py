"""The large model's ship rule, applied to stored results (models/README.md, "Ship rule"; kept
since round 21). A candidate replaces the shipped weights when both hold:
  (a) its mean of generated AJ, BADJA PCK@0.2 and pairs <delta_avg (evaluate.py at 256 px, the
      published outputs) is at least the shipped weights' mean;
  (b) neither BADJA PCK@0.2 at the frames' shape (evaluate.py --sets badja --size 768x448) nor
      `synth-eval-v1` AJ in the C++ engine (`edgetap eval`) is more than --tolerance below the
      shipped weights'.
Each side is three results files; the rule's figures, each difference and the verdict are printed.
Exit status 0: ships; 1: does not; 2: a file or a figure is missing.

  python3 training/ship_check.py \\
      --candidate results/eval_X.json results/eval_X_badja768x448.json results/eval_cpp_X.json \\
      --shipped results/eval_edgetap-large-v6_published.json \\
                results/eval_edgetap-large-v6_published_badja768x448.json \\
                results/eval_cpp_edgetap-large-v6_published.json

Which of a run's weights and their moving average is the candidate is decided before this, by the
higher validation AJ (`val` in evaluate.py's file, printed here when present).
"""
import argparse
import json
import sys

WIDE_SIZE = "768x448"


class ResultsError(ValueError):
    """A results file that lacks what the rule reads: the message names the file and the key."""


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as e:
        raise ResultsError(f"{path}: cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ResultsError(f"{path}: line {e.lineno}: not JSON ({e.msg})") from None
    if not isinstance(doc, dict):
        raise ResultsError(f"{path}: not a results file (its top level is not an object)")
    return doc


def dig(doc, path, keys):
    """doc[keys[0]][keys[1]]...; a missing key is a ResultsError naming the file and the key path."""
    node = doc
    for i, key in enumerate(keys):
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and isinstance(key, str):
            found = [d for d in node if isinstance(d, dict) and d.get("name") == key]
            if not found:
                raise ResultsError(f"{path}: no entry named '{key}' under {'/'.join(map(str, keys[:i])) or 'the top'}")
            node = found[0]
        else:
            raise ResultsError(f"{path}: missing key {'/'.join(map(str, keys[:i + 1]))}")
    if node is None or isinstance(node, (dict, list)):
        raise ResultsError(f"{path}: {'/'.join(map(str, keys))} is not a number")
    return float(node)


def figures(main_path, wide_path, cpp_path, rule="published"):
    """The five figures the rule reads, from one side's three files; `rule` picks evaluate.py's
    entry (`published`: the visibility rule the file's weights declare; `vis`, `vis*conf`)."""
    main, wide, cpp = load(main_path), load(wide_path), load(cpp_path)
    for path, doc, key, want in ((main_path, main, "size", "256x256"), (wide_path, wide, "size", WIDE_SIZE),
                                 (cpp_path, cpp, "frame_size", "256x256")):
        size = doc.get(key)             # evaluate.py records `size` since 2026-12-05; older files lack it
        if size is not None and size != want:
            raise ResultsError(f"{path}: size is {size}, the rule reads this file at {want}")
    entry = f"edgetap[{rule}]"
    out = dict(gen_AJ=dig(main, main_path, ["sets", "gen", entry, "AJ"]),
               badja_PCK=dig(main, main_path, ["sets", "badja", entry, "PCK@0.2"]),
               pairs_davg=dig(main, main_path, ["sets", "pairs", entry, "delta_avg"]),
               badja_wide_PCK=dig(wide, wide_path, ["sets", "badja", entry, "PCK@0.2"]),
               synth_eval_AJ=dig(cpp, cpp_path, ["datasets", "synth-eval-v1", "mean", "first", "average_jaccard"]))
    out["mean"] = (out["gen_AJ"] + out["badja_PCK"] + out["pairs_davg"]) / 3
    if "val" in main.get("sets", {}):
        out["val_AJ"] = dig(main, main_path, ["sets", "val", entry, "AJ"])
    out["visible_rule"] = main.get("visible_rule")
    return out


def verdict(cand, shipped, tolerance):
    """[(clause, holds, why)] of the rule for these figures."""
    return [
        ("(a) mean of generated AJ, BADJA PCK, pairs <delta_avg", cand["mean"] >= shipped["mean"],
         f"{cand['mean']:.4f} against {shipped['mean']:.4f}"),
        (f"(b) BADJA PCK at {WIDE_SIZE} within {tolerance}", cand["badja_wide_PCK"] >= shipped["badja_wide_PCK"] - tolerance,
         f"{cand['badja_wide_PCK']:.4f} against {shipped['badja_wide_PCK']:.4f}"),
        (f"(b) synth-eval-v1 AJ (C++) within {tolerance}", cand["synth_eval_AJ"] >= shipped["synth_eval_AJ"] - tolerance,
         f"{cand['synth_eval_AJ']:.4f} against {shipped['synth_eval_AJ']:.4f}"),
    ]


def report(cand, shipped, clauses, ships):
    lines = [f"{'figure':<16}{'candidate':>11}{'shipped':>11}{'difference':>12}"]
    for key in ("gen_AJ", "badja_PCK", "pairs_davg", "mean", "badja_wide_PCK", "synth_eval_AJ", "val_AJ"):
        if key in cand and key in shipped:
            lines.append(f"{key:<16}{cand[key]:>11.4f}{shipped[key]:>11.4f}{cand[key] - shipped[key]:>+12.4f}")
    lines += [f"{'holds' if ok else 'FAILS'}: {name}: {why}" for name, ok, why in clauses]
    lines.append("ships" if ships else "does not ship")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    files = ("MAIN.json", "BADJA_768x448.json", "CPP.json")
    ap.add_argument("--candidate", nargs=3, required=True, metavar=files)
    ap.add_argument("--shipped", nargs=3, required=True, metavar=files)
    ap.add_argument("--rule", choices=("published", "vis", "vis*conf"), default="published",
                    help="evaluate.py's entry to read: an unexported checkpoint's 'published' rule is vis*conf, "
                         "the exports' is vis (default published)")
    ap.add_argument("--tolerance", type=float, default=0.01, help="clause (b)'s allowance (default 0.01)")
    args = ap.parse_args(argv)
    try:
        cand, shipped = figures(*args.candidate, args.rule), figures(*args.shipped, args.rule)
    except ResultsError as e:
        print(f"ship_check.py: {e}", file=sys.stderr)
        return 2
    clauses = verdict(cand, shipped, args.tolerance)
    ships = all(ok for _, ok, _ in clauses)
    print(report(cand, shipped, clauses, ships))
    if cand["visible_rule"] != shipped["visible_rule"]:
        print(f"note: the files' published visibility rules differ (candidate {cand['visible_rule']}, "
              f"shipped {shipped['visible_rule']}); --rule vis compares both under one")
    return 0 if ships else 1


if __name__ == "__main__":
    sys.exit(main())
