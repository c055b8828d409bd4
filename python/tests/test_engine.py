"""The Python API: zero-copy stepping, in-place output, errors naming the
argument, NaN isolation, setters, state, presets and scenario files."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import sinew
from conftest import ROOT, write_safetensors

MOTOR = sinew.DcMotor(stiffness=20.0, damping=0.5, effort_limit=23.7, saturation_effort=23.7,
                      velocity_limit=30.1)


def leg(num_envs=4, backend="cpu", **kw):
    return sinew.Engine(["hip", "knee", "ankle"], [sinew.Group("leg", [".*"], MOTOR, **kw)],
                        num_envs, backend=backend)


def zeros(engine, cols=None):
    return np.zeros((engine.num_envs, cols or engine.num_targets), dtype=np.float32)


# -- zero copy ----------------------------------------------------------------

def test_out_is_written_in_place_and_returned(backend):
    e = leg(backend=backend)
    target = np.full((4, 3), 0.3, dtype=np.float32)
    out = np.full((4, 3), np.nan, dtype=np.float32)
    ctrl = e.step(position_target=target, out=out)
    assert ctrl is out
    np.testing.assert_array_equal(out, np.float32(20.0) * np.float32(0.3))


def test_inputs_are_read_in_place_each_step():
    e = leg()
    target = zeros(e)
    out = zeros(e)
    for k in range(3):
        target[:] = 0.1 * k  # mutate the caller's buffer, pass the same object
        e.step(position_target=target, out=out)
        np.testing.assert_array_equal(out, np.float32(20.0) * np.float32(0.1 * k))


def test_views_share_memory_with_dlpack_producers():
    """numpy's own __dlpack__ stands in for torch: an object offering only the
    protocol is read in place, and out= on it is written in place."""

    class Producer:  # only the DLPack protocol, like a torch CPU tensor
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kw):
            return self.a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    e = leg()
    target, out = np.full((4, 3), 0.5, dtype=np.float32), zeros(e)
    ctrl = e.step(position_target=Producer(target), out=Producer(out))
    assert np.shares_memory(ctrl, out)
    np.testing.assert_array_equal(out, np.float32(10.0))
    target[:] = 0.25
    e.step(position_target=Producer(target), out=Producer(out))
    np.testing.assert_array_equal(out, np.float32(5.0))


def test_a_new_array_is_made_without_out():
    e = leg()
    a = e.step()
    b = e.step()
    assert a.shape == (4, 3) and a.dtype == np.float32 and not np.shares_memory(a, b)


# -- errors name the argument --------------------------------------------------

def test_wrong_dtype_is_a_type_error_naming_the_argument():
    e = leg()
    with pytest.raises(TypeError, match="^vel: expected dtype float32, got float64"):
        e.step(vel=np.zeros((4, 3)))


def test_wrong_shape_is_a_shape_error():
    e = leg()
    with pytest.raises(sinew.ShapeError, match=r"^pos: expected shape \[4, 3\], got \[4, 2\]"):
        e.step(pos=np.zeros((4, 2), dtype=np.float32))
    with pytest.raises(ValueError, match=r"^out: expected shape \[4, 3\], got \[3\]"):
        e.step(out=np.zeros(3, dtype=np.float32))


@pytest.mark.parametrize("make", [
    lambda: np.asfortranarray(np.zeros((4, 3), dtype=np.float32)),
    lambda: np.zeros((3, 4), dtype=np.float32).T,
    lambda: np.zeros((4, 6), dtype=np.float32)[:, ::2],
])
def test_fortran_and_strided_arrays_are_refused(make):
    e = leg()
    with pytest.raises(sinew.ShapeError, match="^effort_target: the array is not C-contiguous"):
        e.step(effort_target=make())


def test_read_only_or_aliased_out_is_refused():
    e = leg()
    ro = zeros(e)
    ro.flags.writeable = False
    with pytest.raises(sinew.ShapeError, match="^out: .*writeable"):
        e.step(out=ro)
    shared = zeros(e)
    with pytest.raises(sinew.ShapeError, match="^out: .*must not also be an input"):
        e.step(pos=shared, out=shared)


def test_out_sharing_memory_with_an_input_in_any_form_is_refused():
    """Not only the same array: a DLPack view of it (another base) and a
    view over part of its rows."""
    e = leg()
    shared = zeros(e)
    with pytest.raises(sinew.ShapeError, match="^out: .*must not also be an input"):
        e.step(pos=np.from_dlpack(shared), out=shared)
    rows = np.zeros((6, 3), dtype=np.float32)
    with pytest.raises(sinew.ShapeError, match="^out: .*must not also be an input"):
        e.step(vel=rows[2:], out=rows[:4])
    e.step(pos=rows[:4], vel=rows[:4], out=zeros(e))  # inputs may share memory


def unaligned(shape):
    """A C-contiguous float32 array whose data starts one byte past a float."""
    count = shape[0] * shape[1]
    return np.frombuffer(bytearray(4 * count + 1), dtype=np.float32, count=count,
                         offset=1).reshape(shape)


def test_unaligned_arrays_are_shape_errors_not_crashes():
    e = leg()
    for arg in ("position_target", "pos", "out"):
        a = unaligned((4, 3))
        assert a.flags.c_contiguous and not a.flags.aligned
        with pytest.raises(sinew.ShapeError, match=f"^{arg}: .*not aligned"):
            e.step(**{arg: a})
    with pytest.raises(sinew.ShapeError, match="^values: .*not aligned"):
        e.set_input("anything", unaligned((4, 3)))
    np.testing.assert_array_equal(e.step(pos=unaligned((4, 3)).copy()), zeros(e))


def test_other_types_are_type_errors():
    e = leg()
    with pytest.raises(TypeError, match="^vel: expected a numpy array"):
        e.step(vel="fast")


def test_config_errors_name_group_field_and_value():
    bad = sinew.IdealPd(stiffness=-1.0, damping=0.0)
    with pytest.raises(sinew.ConfigError, match="group `arm`: stiffness = -1 is invalid"):
        sinew.Engine(["j"], [sinew.Group("arm", [".*"], bad)], 2)
    with pytest.raises(ValueError, match="group `arm`: .*needs field `stiffness`"):
        sinew.Engine(["j"], [sinew.Group("arm", [".*"], sinew.IdealPd(damping=1.0))], 2)
    with pytest.raises(sinew.ConfigError, match="group `arm`.*`nope`.*matches no"):
        sinew.Engine(["j"], [sinew.Group("arm", ["nope"], sinew.IdealPd(stiffness=1.0,
                                                                        damping=0.0))], 2)
    # A value of the wrong type names its group too (the generated table's
    # line would mean nothing to the caller).
    with pytest.raises(sinew.ConfigError, match="^group `arm`: field `stiffness`: invalid type"):
        sinew.Engine(["j"], [sinew.Group("arm", [".*"], sinew.IdealPd(stiffness="x"))], 2)
    with pytest.raises(sinew.ConfigError, match="^group `arm`: field `max_lag`"):
        sinew.Engine(["j"], [sinew.Group("arm", [".*"], sinew.IdealPd(stiffness=1.0, damping=0.0),
                                         delay=sinew.Delay(max_lag=-1))], 2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'stifness'"):
        sinew.IdealPd(stifness=1.0)
    with pytest.raises(sinew.ConfigError, match="unknown kind `warp_drive`"):
        sinew.Engine(["j"], [sinew.Group("arm", [".*"], sinew.Kind("warp_drive"))], 2)
    with pytest.raises(ValueError, match="backend"):
        leg(backend="tpu")


def test_lookup_errors_are_key_errors_and_index_errors():
    e = leg()
    with pytest.raises(KeyError, match="no group is named `arm`"):
        e.read_param("arm", "stiffness")
    with pytest.raises(sinew.UnknownNameError, match="stiffnes"):
        e.set_param("leg", "stiffnes", 1.0)
    with pytest.raises(sinew.UnknownNameError):
        e.read_state("leg", "integral")
    with pytest.raises(IndexError, match="env 9 is out of range for 4 envs"):
        e.reset([0, 9])
    with pytest.raises(IndexError):
        e.set_param("leg", "stiffness", 1.0, env_ids=[-1])
    with pytest.raises(TypeError, match="env_ids: expected integers"):
        e.reset([0.5])


def test_bad_setter_values_write_nothing():
    e = leg()
    with pytest.raises(sinew.ConfigError, match="damping"):
        e.set_gains("leg", kp=5.0, kd=-1.0)
    np.testing.assert_array_equal(e.read_param("leg", "stiffness"), 20.0)
    with pytest.raises(sinew.ShapeError):
        e.set_param("leg", "stiffness", np.ones((2, 3), dtype=np.float32))


# -- NaN isolation --------------------------------------------------------------

def test_a_nan_in_one_env_zeroes_that_row_only(backend):
    e = leg(backend=backend)
    target = np.full((4, 3), 0.3, dtype=np.float32)
    target[2, 1] = np.nan
    out = e.step(position_target=target)
    assert e.nonfinite_envs().tolist() == [2]
    np.testing.assert_array_equal(out[2], 0.0)
    np.testing.assert_array_equal(out[[0, 1, 3]], np.float32(20.0) * np.float32(0.3))
    target[2, 1] = 0.3
    e.step(position_target=target, out=out)
    assert e.nonfinite_envs().size == 0


def test_nan_leaves_stateful_kinds_state_alone():
    pid = sinew.MjPid(kp=10.0, ki=5.0, imax=2.0, input="pos")
    e = sinew.Engine(["a", "b"], [sinew.Group("pid", [".*"], pid)], 3, backend="cpu", dt=0.01)
    t = np.full((3, 2), 0.5, dtype=np.float32)
    e.step(position_target=t)
    before = e.read_state("pid", "integral")
    assert (before != 0).all()
    t[1, 0] = np.inf
    e.step(position_target=t)
    after = e.read_state("pid", "integral")
    np.testing.assert_array_equal(after[1], before[1])
    assert (after[[0, 2]] != before[[0, 2]]).all()


# -- parameters, state, lags ---------------------------------------------------

def test_set_param_scalar_per_env_and_per_env_target():
    e = leg()
    e.set_param("leg", "stiffness", 1.0)
    e.set_param("leg", "stiffness", [2.0, 3.0], env_ids=[3, 1])
    e.set_param("leg", "stiffness", np.arange(3, dtype=np.float32)[None, :] + 10, env_ids=[0])
    np.testing.assert_array_equal(e.read_param("leg", "stiffness"),
                                  [[10, 11, 12], [3, 3, 3], [1, 1, 1], [2, 2, 2]])
    e.set_param("leg", "velocity_limit_motor", 5.0)  # mjlab's alias
    np.testing.assert_array_equal(e.read_param("leg", "velocity_limit"), 5.0)


def test_env_ids_as_mask_slice_and_tensor_like():
    e = leg()
    e.set_param("leg", "damping", 7.0, env_ids=np.array([True, False, True, False]))
    e.set_param("leg", "damping", 8.0, env_ids=slice(3, None))
    e.set_param("leg", "damping", [], env_ids=[])  # an empty selection writes nothing
    np.testing.assert_array_equal(e.read_param("leg", "damping")[:, 0], [7, 0.5, 7, 8])


def test_state_is_read_and_written_by_name_and_reset():
    pid = sinew.MjPid(kp=10.0, ki=5.0, imax=2.0, input="pos")
    e = sinew.Engine(["a", "b"], [sinew.Group("pid", [".*"], pid)], 3, dt=0.01)
    assert e.groups()[0].state == ["slew", "integral"]
    e.set_state("pid", "integral", 0.25, env_ids=[1])
    np.testing.assert_array_equal(e.read_state("pid", "integral")[:, 0], [0, 0.25, 0])
    e.reset([1])
    np.testing.assert_array_equal(e.read_state("pid", "integral"), 0.0)


def test_mujoco_activation_and_learned_history_are_state_slots(tmp_path):
    # MuJoCo's `act` is a MuJoCo-law group's state slot, `act_dot` an output.
    cylinder = sinew.MjGeneral(command_field="effort", dyn_type="filter", dynprm=[0.1],
                               gainprm=[2.0])
    e = sinew.Engine(["a"], [sinew.Group("c", ["a"], cylinder)], 2, backend="cpu", dt=0.01)
    assert e.groups()[0].state == ["act"]
    assert "act_dot" in e.output_planes
    e.set_state("c", "act", 0.5)
    ctrl = e.step(effort_target=np.ones((2, 1), dtype=np.float32))
    np.testing.assert_allclose(ctrl, 1.0)  # gain · act, before the step's update
    np.testing.assert_allclose(e.read_output("act_dot"), 5.0)  # (1 − 0.5) / 0.1
    np.testing.assert_allclose(e.read_state("c", "act"), 0.55)
    e.reset([1])
    np.testing.assert_allclose(e.read_state("c", "act")[:, 0], [0.55, 0.0])

    # A learned MLP's history: `fresh`, then the errors and velocities back to its largest tap.
    net = tmp_path / "sum.safetensors"  # e(t) + e(t − 1)
    write_safetensors(net, [{"weight": [[1.0, 1.0, 0.0, 0.0]], "bias": [0.0],
                             "activation": "identity"}])
    mlp = sinew.LearnedMlp(network=str(net), effort_limit=1e3, saturation_effort=1e4,
                           velocity_limit=1e3, taps=[0, 1])
    e = sinew.Engine(["a"], [sinew.Group("m", ["a"], mlp)], 2, backend="cpu")
    assert e.groups()[0].state == ["fresh", "error_1", "vel_1"]
    e.step(position_target=np.full((2, 1), 2.0, dtype=np.float32))
    np.testing.assert_array_equal(e.read_state("m", "error_1"), 2.0)
    e.set_state("m", "error_1", 5.0, env_ids=[1])
    ctrl = e.step(position_target=np.full((2, 1), 3.0, dtype=np.float32))
    np.testing.assert_array_equal(ctrl[:, 0], [5.0, 8.0])  # e(t) + e(t − 1)


def test_lags_clamp_and_reset():
    e = leg(delay=sinew.Delay(min_lag=1, max_lag=3, hold_prob=1.0))
    e.set_lags("leg", [0, 2, 5, 3])
    assert e.read_lags("leg").tolist() == [1, 2, 3, 3]
    e.set_lags("leg", 2, env_ids=[0])
    assert e.read_lags("leg").tolist() == [2, 2, 3, 3]
    with pytest.raises(ValueError, match="negative"):
        e.set_lags("leg", -1)


def test_delay_delays_the_target():
    e = leg(num_envs=1, delay=sinew.Delay(min_lag=2, max_lag=2))
    out = zeros(e)
    seen = []
    for k in range(4):
        e.step(position_target=np.full((1, 3), float(k), dtype=np.float32), out=out)
        seen.append(float(out[0, 0]))
    assert seen == [0.0, 0.0, 0.0, 20.0]


# -- presets, scenario files, planes --------------------------------------------

def test_every_preset_builds_and_steps():
    for name in sinew.presets():
        e = sinew.Engine.from_preset(name, num_envs=2, backend="cpu")
        out = e.step()
        assert out.shape == (2, e.num_ctrl)
    with pytest.raises(KeyError, match="no preset `robodog`"):
        sinew.Engine.from_preset("robodog")


def test_scenario_file_and_its_errors(tmp_path: Path):
    e = sinew.Engine.from_scenario(ROOT / "presets" / "unitree_go1.toml", num_envs=3)
    assert (e.num_envs, e.num_targets) == (3, 12)
    bad = tmp_path / "bad.toml"
    bad.write_text("num_envs = 2\nsteps = 1\ndt = 0.01\n[robot]\njoints = ['a']\n"
                   "[[groups]]\nname = 'g'\ntargets = ['a']\nkind = 'ideal_pd'\nstiffness = -2\n"
                   "damping = 0\n")
    with pytest.raises(sinew.ConfigError, match=r"bad.toml:\d+: .*stiffness = -2"):
        sinew.Engine.from_scenario(bad)
    with pytest.raises(OSError):
        sinew.Engine.from_scenario(tmp_path / "missing.toml")


def test_servo_preset_with_planes():
    e = sinew.Engine(["j"], [sinew.Group("servo", ["j"], sinew.Preset("xl330/m6"))], 2,
                     dt=0.002)
    assert "frictionloss" in e.output_planes and "external_torque" in e.input_planes
    e.set_input("external_torque", np.ones((2, 1), dtype=np.float32))
    e.step(position_target=np.full((2, 1), 0.5, dtype=np.float32))
    assert e.read_output("frictionloss").shape == (2, 1)
    with pytest.raises(KeyError):
        e.read_output("heat")


def test_threads_share_one_engine():
    e = leg(num_envs=64)
    target = np.full((64, 3), 0.3, dtype=np.float32)
    errors = []

    def work():
        out = np.empty((64, 3), dtype=np.float32)
        try:
            for _ in range(200):
                e.step(position_target=target, out=out)
                assert (out == np.float32(20.0) * np.float32(0.3)).all()
        except Exception as ex:  # surfaced below
            errors.append(ex)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_a_step_in_another_thread_keeps_its_out_to_itself():
    """While a step in one thread writes an array (its GIL released), another
    engine's step may neither read nor write that memory, nor its setters
    read it; once the step is done, they may."""
    busy, other = leg(num_envs=4096), leg()
    out = np.zeros((4096, 3), dtype=np.float32)
    stop = threading.Event()

    def work():
        while not stop.is_set():
            busy.time_steps(20, out=out)  # 20 steps with the GIL released

    worker = threading.Thread(target=work)
    worker.start()
    uses = {"pos": lambda: other.step(pos=out[:4]), "out": lambda: other.step(out=out[:4]),
            "values": lambda: other.set_param("leg", "stiffness", out[:4])}
    seen = {}
    deadline = time.monotonic() + 60
    try:
        while len(seen) < len(uses) and time.monotonic() < deadline:
            for arg, use in uses.items():
                try:
                    use()
                except sinew.ShapeError as ex:
                    seen[arg] = str(ex)
    finally:
        stop.set()
        worker.join()
    for arg in uses:
        assert seen[arg].startswith(f"{arg}: the array shares memory with one that a step running "
                                    "in another thread writes" + (" or reads (" if arg == "out"
                                                                  else " ("))
        uses[arg]()


def test_cpu_spin_wait_is_set_checked_and_leaves_results_alone():
    assert sinew.cpu_spin_wait() == pytest.approx(200e-6)
    # A step big enough to run on several threads, with and without spin.
    e = leg(num_envs=16384)
    target = np.random.default_rng(0).uniform(-1, 1, (16384, 3)).astype(np.float32)
    spun = e.step(position_target=target).copy()
    try:
        sinew.set_cpu_spin_wait(0.0)
        assert sinew.cpu_spin_wait() == 0.0
        np.testing.assert_array_equal(e.step(position_target=target), spun)
        for bad in (-1e-6, float("nan"), float("inf")):
            with pytest.raises(ValueError, match="set_cpu_spin_wait: seconds"):
                sinew.set_cpu_spin_wait(bad)
        assert sinew.cpu_spin_wait() == 0.0
    finally:
        sinew.set_cpu_spin_wait(200e-6)


def test_kinds_module_is_generated_from_the_registry():
    gen = ROOT / "python" / "tools" / "gen_kinds.py"
    run = subprocess.run([sys.executable, str(gen), "--check"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    keys = {cls.key for cls in (getattr(sinew, n) for n in sinew.kinds.__all__)}
    assert keys == {k for k, _, _ in sinew._sinew.kinds()}
