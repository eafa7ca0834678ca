"""cpplan's arena against ONNX Runtime's own measured peak on the real exports: with
``--in-place --concat-in-place`` it is never above (the goal of issue 12). Needs the ``ort``
extra."""

from __future__ import annotations

import pytest

from tests.shared import require

onnx = require("onnx", "onnx")
require("onnxruntime", "ort")

from cpplan.graph.onnx import extract_onnx  # noqa: E402
from cpplan.plan import check  # noqa: E402
from cpplan.runtimes.ort import example_feeds, measured_peak, with_weights  # noqa: E402
from cpplan.solve import solve  # noqa: E402
from tests.graph.test_real_exports import DATA, PRESENT, shape_args  # noqa: E402


@pytest.mark.parametrize("name", sorted(PRESENT))
def test_never_above_onnx_runtime(name):
    e = PRESENT[name]
    path = DATA / f"{name}.onnx"
    model = with_weights(onnx.load(str(path), load_external_data=False))
    ort_peak = measured_peak(model.SerializeToString(), example_feeds(e.inputs))
    problem = extract_onnx(path, in_place=True, concat_in_place=True, alignment=64,
                           **shape_args(e))
    plan = solve(problem, time_limit=5)
    assert not check(problem, plan)
    assert 0 < plan.heights["arena"] <= ort_peak, (plan.heights["arena"], ort_peak)


def test_weights_are_filled_with_zeros_of_their_size():
    model = with_weights(onnx.load(str(DATA / "lstm.torchscript.onnx"),
                                   load_external_data=False))
    from onnx import numpy_helper

    big = [t for t in model.graph.initializer if t.raw_data and len(t.raw_data) > 1024]
    assert big and all(t.data_location == onnx.TensorProto.DEFAULT for t in big)
    assert all(not numpy_helper.to_array(t).any() for t in big)
