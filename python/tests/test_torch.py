"""torch CPU tensors in and out without copies. Skipped when torch is not
installed (CI does not install it; numpy's own __dlpack__ covers the same
path in test_engine.py)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")

import sinew  # noqa: E402

pytestmark = pytest.mark.torch


def engine(num_envs=8):
    motor = sinew.IdealPd(stiffness=10.0, damping=1.0, effort_limit=5.0)
    return sinew.Engine(["a", "b", "c"], [sinew.Group("g", [".*"], motor)], num_envs)


def test_tensors_are_read_and_written_in_place():
    e = engine()
    target = torch.full((8, 3), 0.2)
    out = torch.empty((8, 3))
    ctrl = e.step(position_target=target, out=out)
    assert ctrl.__array_interface__["data"][0] == out.data_ptr()
    assert torch.allclose(out, torch.full((8, 3), 2.0))
    target.fill_(0.3)  # the same tensor, mutated in place
    e.step(position_target=target, out=out)
    assert torch.allclose(out, torch.full((8, 3), 3.0))


def test_tensor_errors_name_the_argument():
    e = engine()
    with pytest.raises(TypeError, match="^pos: expected dtype float32"):
        e.step(pos=torch.zeros((8, 3), dtype=torch.float64))
    with pytest.raises(sinew.ShapeError, match="^vel: the array is not C-contiguous"):
        e.step(vel=torch.zeros((3, 8)).T)
    with pytest.raises(TypeError, match="^pos: cannot read this Tensor in place"):
        e.step(pos=torch.zeros((8, 3), requires_grad=True))


def test_an_out_tensor_sharing_memory_with_an_input_is_refused():
    e = engine()
    shared = torch.zeros((8, 3))
    with pytest.raises(sinew.ShapeError, match="^out: .*must not also be an input"):
        e.step(pos=shared, out=shared)
    rows = torch.zeros((12, 3))
    with pytest.raises(sinew.ShapeError, match="^out: .*must not also be an input"):
        e.step(vel=rows[4:], out=rows[:8])


def test_setters_take_tensors():
    e = engine()
    e.set_gains("g", kp=torch.tensor([1.0, 2.0]), env_ids=torch.tensor([0, 7]))
    assert e.read_param("g", "stiffness")[[0, 7], 0].tolist() == [1.0, 2.0]
