"""ship_check.py: the ship rule's clauses on results files, and its errors on files that lack a figure."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import ship_check  # noqa: E402


def write_side(tmp_path, tag, gen, badja, pairs, wide, synth, rule="vis", wide_size="768x448"):
    """One side's three files, as evaluate.py (twice) and `edgetap eval` write them."""
    def entries(**figs):
        return {f"edgetap[{r}]": dict(figs) for r in ("vis", "vis*conf", "published")}
    main = dict(visible_rule=rule, size="256x256",
                sets=dict(gen=entries(AJ=gen), badja=entries(AJ=0.2, **{"PCK@0.2": badja}),
                          pairs=entries(AJ=0.6, delta_avg=pairs)))
    wide_doc = dict(visible_rule=rule, size=wide_size, sets=dict(badja=entries(**{"PCK@0.2": wide})))
    cpp = dict(frame_size="256x256", datasets=[dict(name="pairs", mean=dict(first=dict(average_jaccard=0.6))),
                         dict(name="synth-eval-v1", mean=dict(first=dict(average_jaccard=synth)))])
    paths = []
    for name, doc in (("main", main), ("wide", wide_doc), ("cpp", cpp)):
        path = tmp_path / f"{tag}_{name}.json"
        path.write_text(json.dumps(doc))
        paths.append(str(path))
    return paths


SHIPPED = dict(gen=0.66, badja=0.65, pairs=0.77, wide=0.69, synth=0.69)


def run(tmp_path, capsys, **cand):
    shipped = write_side(tmp_path, "shipped", **SHIPPED)
    candidate = write_side(tmp_path, "cand", **{**SHIPPED, **cand})
    rc = ship_check.main(["--candidate", *candidate, "--shipped", *shipped])
    return rc, capsys.readouterr()


def test_a_higher_mean_within_the_tolerances_ships(tmp_path, capsys):
    rc, out = run(tmp_path, capsys, gen=0.70, badja=0.64, wide=0.682, synth=0.681)
    assert rc == 0
    assert out.out.strip().endswith("ships")
    assert "0.7033 against 0.6933" in out.out


def test_a_lower_mean_does_not_ship(tmp_path, capsys):
    rc, out = run(tmp_path, capsys, gen=0.65)
    assert rc == 1
    assert "FAILS: (a)" in out.out and out.out.strip().endswith("does not ship")


@pytest.mark.parametrize("figure", ["wide", "synth"])
def test_a_drop_past_the_tolerance_on_either_guard_does_not_ship(tmp_path, capsys, figure):
    rc, out = run(tmp_path, capsys, gen=0.75, **{figure: SHIPPED[figure] - 0.011})
    assert rc == 1
    assert out.out.count("FAILS: (b)") == 1


def test_a_missing_figure_names_the_file_and_key(tmp_path, capsys):
    shipped = write_side(tmp_path, "shipped", **SHIPPED)
    candidate = write_side(tmp_path, "cand", **SHIPPED)
    doc = json.loads(open(candidate[0]).read())
    del doc["sets"]["pairs"]
    open(candidate[0], "w").write(json.dumps(doc))
    rc = ship_check.main(["--candidate", *candidate, "--shipped", *shipped])
    err = capsys.readouterr().err
    assert rc == 2
    assert candidate[0] in err and "sets/pairs" in err


def test_a_cpp_file_without_the_generated_set_is_named(tmp_path, capsys):
    shipped = write_side(tmp_path, "shipped", **SHIPPED)
    candidate = write_side(tmp_path, "cand", **SHIPPED)
    doc = json.loads(open(candidate[2]).read())
    doc["datasets"] = doc["datasets"][:1]
    open(candidate[2], "w").write(json.dumps(doc))
    rc = ship_check.main(["--candidate", *candidate, "--shipped", *shipped])
    err = capsys.readouterr().err
    assert rc == 2 and "no entry named 'synth-eval-v1'" in err


def test_a_wide_file_at_another_size_is_refused(tmp_path, capsys):
    shipped = write_side(tmp_path, "shipped", **SHIPPED)
    candidate = write_side(tmp_path, "cand", **SHIPPED, wide_size="256x256")
    rc = ship_check.main(["--candidate", *candidate, "--shipped", *shipped])
    assert rc == 2 and "size is 256x256" in capsys.readouterr().err


def test_broken_json_names_its_line(tmp_path, capsys):
    shipped = write_side(tmp_path, "shipped", **SHIPPED)
    candidate = write_side(tmp_path, "cand", **SHIPPED)
    open(candidate[1], "w").write('{\n "sets": \n}')
    rc = ship_check.main(["--candidate", *candidate, "--shipped", *shipped])
    err = capsys.readouterr().err
    assert rc == 2 and candidate[1] in err and "line 3" in err


def test_differing_published_rules_are_noted(tmp_path, capsys):
    shipped = write_side(tmp_path, "shipped", **SHIPPED)
    candidate = write_side(tmp_path, "cand", **SHIPPED, rule="vis*conf")
    ship_check.main(["--candidate", *candidate, "--shipped", *shipped])
    assert "rules differ" in capsys.readouterr().out


def test_evaluate_records_the_sizes_the_rule_checks():
    import evaluate
    from edgetap import synth
    assert evaluate.size_label(synth.parse_clip_size("256")) == "256x256"
    assert evaluate.size_label(synth.parse_clip_size(ship_check.WIDE_SIZE)) == ship_check.WIDE_SIZE


def test_a_file_that_is_not_an_object_is_refused(tmp_path, capsys):
    shipped = write_side(tmp_path, "shipped", **SHIPPED)
    candidate = write_side(tmp_path, "cand", **SHIPPED)
    open(candidate[2], "w").write("[1, 2]")
    rc = ship_check.main(["--candidate", *candidate, "--shipped", *shipped])
    assert rc == 2 and "not a results file" in capsys.readouterr().err
