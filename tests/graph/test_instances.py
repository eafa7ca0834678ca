"""The generated instances in instances/: valid problems, plannable with their aliases, recording
how they were made, and exactly what `python -m cpplan.graph.instances` regenerates."""

import json
from pathlib import Path

import pytest

from cpplan.bounds import max_load
from cpplan.io import read_problem
from cpplan.io.native import problem_to_dict
from cpplan.replicas.naive import plan as naive_plan

INSTANCES = Path(__file__).resolve().parents[2] / "instances"
FILES = sorted([*INSTANCES.glob("onnx/*.json"), *INSTANCES.glob("hand/*.json")])


def test_the_instances_are_there():
    names = {f.relative_to(INSTANCES).as_posix() for f in FILES}
    for model in ("bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
                  "shufflenet", "squeezenet", "vgg19", "zfnet512"):
        assert {f"onnx/{model}.json", f"onnx/{model}.inplace-concat.json"} <= names
    for model in ("unet", "gpt2-block"):
        assert {f"hand/{model}.json", f"hand/{model}.inplace-concat.json"} <= names


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(INSTANCES).as_posix())
def test_instance_is_valid_plannable_and_says_how_it_was_made(path):
    problem = read_problem(path)  # validates
    meta = problem.meta
    assert meta["command"] == "python -m cpplan.graph.instances"
    assert meta["source"]["model"] and meta["cpplan_version"]
    rewrites = meta["options"]["in_place"] and meta["options"]["concat_in_place"]
    assert rewrites == path.name.endswith(".inplace-concat.json")
    assert "not planned" in meta["constants"]["where"]
    plan = naive_plan(problem)  # to_plan runs the checker, aliases included
    assert plan.status in ("optimal", "feasible")
    assert plan.heights["arena"] >= max_load(problem)["arena"].bytes
    assert path.stat().st_size < 200_000  # problems, not weights


def test_rewrites_lower_the_max_load_of_densenet():
    plain = read_problem(INSTANCES / "onnx" / "densenet121.json")
    both = read_problem(INSTANCES / "onnx" / "densenet121.inplace-concat.json")
    assert plain.aliases == () and len(both.aliases) > 500
    assert max_load(both)["arena"].bytes < max_load(plain)["arena"].bytes
    assert both.meta["rewrites"]["concat"]["aliases"] > 100


def test_regenerating_gives_the_same_files():
    pytest.importorskip("onnx")
    from cpplan.graph.instances import generate

    made = dict(generate())
    assert set(made) == {f.relative_to(INSTANCES).as_posix() for f in FILES}
    for rel, problem in made.items():
        on_disk = json.loads((INSTANCES / rel).read_text())
        assert json.loads(json.dumps(problem_to_dict(problem))) == on_disk, rel


def test_generated_aliases_are_safe_byte_for_byte():
    pytest.importorskip("onnx")
    from memsim import simulate

    from cpplan.graph import models, to_problem
    from cpplan.graph.instances import ONNX_MODELS, onnx_light_path
    from cpplan.graph.onnx import load_onnx

    graphs = [models.unet(), models.gpt2_block()]
    graphs += [load_onnx(onnx_light_path(m)) for m in ONNX_MODELS]
    for g in graphs:
        p = to_problem(g, in_place=True, concat_in_place=True)
        assert simulate(g, p) == [], g.name
