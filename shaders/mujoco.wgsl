// MuJoCo's actuator force law. Twin of crates/sinew-core/src/kinds/mj_general/law.rs
// (same names, same operation order, same comparisons and guards).

const MJ_MINVAL: f32 = 1e-15;
const MJ_MAX_CTRL: f32 = 1e10;

// `MjActuator.flags` bits (sinew_core::MJ_*).
const MJ_CTRL_LIMITED: u32 = 1u;
const MJ_FORCE_LIMITED: u32 = 2u;
const MJ_ACT_LIMITED: u32 = 4u;
const MJ_ACT_EARLY: u32 = 8u;
const MJ_TABLE_PARAMS: u32 = 16u;

// `DynType`, `GainType` and `BiasType` discriminants.
const MJ_DYN_NONE: u32 = 0u;
const MJ_DYN_INTEGRATOR: u32 = 1u;
const MJ_DYN_FILTER: u32 = 2u;
const MJ_DYN_FILTER_EXACT: u32 = 3u;
const MJ_DYN_MUSCLE: u32 = 4u;
const MJ_GAIN_AFFINE: u32 = 1u;
const MJ_GAIN_MUSCLE: u32 = 2u;
const MJ_GAIN_DCMOTOR: u32 = 4u;
const MJ_BIAS_AFFINE: u32 = 1u;
const MJ_BIAS_MUSCLE: u32 = 2u;
const MJ_BIAS_DCMOTOR: u32 = 4u;

// One compiled actuator (`MjActuator`).
struct MjActuator {
    ctrl_column: u32,
    path_offset: u32,
    path_len: u32,
    dyn_type: u32,
    gain_type: u32,
    bias_type: u32,
    flags: u32,
    gear: f32,
    act_step: f32,
    ctrl_lo: f32,
    ctrl_hi: f32,
    force_lo: f32,
    force_hi: f32,
    act_lo: f32,
    act_hi: f32,
    length_lo: f32,
    length_hi: f32,
    acc0: f32,
    dynprm: array<f32, 3>,
    gainprm: array<f32, 9>,
    biasprm: array<f32, 9>,
    timestep: f32,
}

struct MjOut {
    force: f32,
    act_dot: f32,
    act_next: f32,
}

fn mj_floor(x: f32) -> f32 {
    return select(x, MJ_MINVAL, x < MJ_MINVAL);
}

fn mj_muscle_gain_length(l: f32, lmin: f32, lmax: f32) -> f32 {
    if l < lmin || l > lmax {
        return 0.0;
    }
    let a = 0.5 * (lmin + 1.0);
    let b = 0.5 * (1.0 + lmax);
    if l <= a {
        let x = fdiv(l - lmin, mj_floor(a - lmin));
        return 0.5 * x * x;
    } else if l <= 1.0 {
        let x = fdiv(1.0 - l, mj_floor(1.0 - a));
        return 1.0 - 0.5 * x * x;
    } else if l <= b {
        let x = fdiv(l - 1.0, mj_floor(b - 1.0));
        return 1.0 - 0.5 * x * x;
    }
    let x = fdiv(lmax - l, mj_floor(lmax - b));
    return 0.5 * x * x;
}

fn mj_muscle_peak(prm: array<f32, 9>, acc0: f32) -> f32 {
    if prm[2] < 0.0 {
        return fdiv(prm[3], mj_floor(acc0));
    }
    return prm[2];
}

fn mj_muscle_l0(prm: array<f32, 9>, length_lo: f32, length_hi: f32) -> f32 {
    return fdiv(length_hi - length_lo, mj_floor(prm[1] - prm[0]));
}

fn mj_muscle_gain(
    length: f32,
    velocity: f32,
    length_lo: f32,
    length_hi: f32,
    acc0: f32,
    prm: array<f32, 9>,
) -> f32 {
    let f0 = mj_muscle_peak(prm, acc0);
    let l0 = mj_muscle_l0(prm, length_lo, length_hi);
    let l = prm[0] + fdiv(length - length_lo, mj_floor(l0));
    let v = fdiv(velocity, mj_floor(l0 * prm[6]));
    let fl = mj_muscle_gain_length(l, prm[4], prm[5]);
    let y = prm[8] - 1.0;
    var fv: f32;
    if v <= -1.0 {
        fv = 0.0;
    } else if v <= 0.0 {
        fv = (v + 1.0) * (v + 1.0);
    } else if v <= y {
        fv = prm[8] - fdiv((y - v) * (y - v), mj_floor(y));
    } else {
        fv = prm[8];
    }
    return -f0 * fl * fv;
}

fn mj_muscle_bias(length: f32, length_lo: f32, length_hi: f32, acc0: f32, prm: array<f32, 9>) -> f32 {
    let f0 = mj_muscle_peak(prm, acc0);
    let l0 = mj_muscle_l0(prm, length_lo, length_hi);
    let l = prm[0] + fdiv(length - length_lo, mj_floor(l0));
    let b = 0.5 * (1.0 + prm[5]);
    if l <= 1.0 {
        return 0.0;
    } else if l <= b {
        let x = fdiv(l - 1.0, mj_floor(b - 1.0));
        return -f0 * prm[7] * 0.5 * x * x;
    }
    let x = fdiv(l - b, mj_floor(b - 1.0));
    return -f0 * prm[7] * (0.5 + x);
}

fn mj_sigmoid(x: f32) -> f32 {
    if x <= 0.0 {
        return 0.0;
    } else if x >= 1.0 {
        return 1.0;
    }
    return x * x * x * (3.0 * x * (2.0 * x - 5.0) + 10.0);
}

fn mj_muscle_dynamics(ctrl: f32, act: f32, dynprm: array<f32, 3>) -> f32 {
    let c = clip(ctrl, 0.0, 1.0);
    let a = clip(act, 0.0, 1.0);
    let tau_act = dynprm[0] * (0.5 + 1.5 * a);
    let tau_deact = fdiv(dynprm[1], 0.5 + 1.5 * a);
    let width = dynprm[2];
    let dctrl = c - act;
    var tau: f32;
    if width < MJ_MINVAL {
        tau = select(tau_deact, tau_act, dctrl > 0.0);
    } else {
        tau = tau_deact + (tau_act - tau_deact) * mj_sigmoid(fdiv(dctrl, width) + 0.5);
    }
    return fdiv(dctrl, mj_floor(tau));
}

fn mj_act_dot(a: MjActuator, ctrl: f32, act: f32) -> f32 {
    switch a.dyn_type {
        case MJ_DYN_INTEGRATOR: {
            return ctrl;
        }
        case MJ_DYN_FILTER, MJ_DYN_FILTER_EXACT: {
            return fdiv(ctrl - act, mj_floor(a.dynprm[0]));
        }
        case MJ_DYN_MUSCLE: {
            return plan_mj_muscle_dynamics(ctrl, act, a.dynprm);
        }
        default: {
            return 0.0;
        }
    }
}

fn mj_next_act(a: MjActuator, act: f32, act_dot: f32) -> f32 {
    let next = act + act_dot * a.act_step;
    if (a.flags & MJ_ACT_LIMITED) != 0u {
        return clip(next, a.act_lo, a.act_hi);
    }
    return next;
}

fn mj_ctrl(a: MjActuator, ctrl: f32) -> f32 {
    if (a.flags & MJ_CTRL_LIMITED) != 0u {
        return clip(ctrl, a.ctrl_lo, a.ctrl_hi);
    }
    return ctrl;
}

fn mj_force(a: MjActuator, ctrl: f32, act: f32, length: f32, velocity: f32) -> MjOut {
    let act_dot = mj_act_dot(a, ctrl, act);
    let act_next = mj_next_act(a, act, act_dot);
    let dc_stateless = a.dynprm[0] <= 0.0;
    var gain: f32;
    switch a.gain_type {
        case MJ_GAIN_AFFINE: {
            gain = a.gainprm[0] + a.gainprm[1] * length + a.gainprm[2] * velocity;
        }
        case MJ_GAIN_MUSCLE: {
            gain = plan_mj_muscle_gain(length, velocity, a.length_lo, a.length_hi, a.acc0, a.gainprm);
        }
        case MJ_GAIN_DCMOTOR: {
            if dc_stateless {
                gain = fdiv(a.gainprm[1], mj_floor(a.gainprm[0]));
            } else {
                gain = a.gainprm[1];
            }
        }
        default: {
            gain = a.gainprm[0];
        }
    }
    var input: f32;
    if a.dyn_type == MJ_DYN_NONE || (a.gain_type == MJ_GAIN_DCMOTOR && dc_stateless) {
        input = ctrl;
    } else if (a.flags & MJ_ACT_EARLY) != 0u {
        input = act_next;
    } else {
        input = act;
    }
    var force = gain * input;
    switch a.bias_type {
        case MJ_BIAS_AFFINE: {
            force += a.biasprm[0] + a.biasprm[1] * length + a.biasprm[2] * velocity;
        }
        case MJ_BIAS_MUSCLE: {
            force += plan_mj_muscle_bias(length, a.length_lo, a.length_hi, a.acc0, a.biasprm);
        }
        case MJ_BIAS_DCMOTOR: {
            if dc_stateless {
                force += 0.0 - gain * a.gainprm[1] * velocity;
            }
        }
        default: {}
    }
    return MjOut(force, act_dot, act_next);
}

// What MuJoCo adds after the force clamp: a dcmotor bias's cogging torque.
fn mj_force_after(a: MjActuator, force: f32, length: f32) -> f32 {
    if a.bias_type == MJ_BIAS_DCMOTOR && a.biasprm[0] != 0.0 {
        return force + a.biasprm[0] * sin(a.biasprm[1] * length + a.biasprm[2]);
    }
    return force;
}

fn mj_force_limit(a: MjActuator, force: f32) -> f32 {
    if (a.flags & MJ_FORCE_LIMITED) != 0u {
        return clip(force, a.force_lo, a.force_hi);
    }
    return force;
}

fn mj_tendon_scale(total: f32, lo: f32, hi: f32) -> f32 {
    if total != 0.0 && total < lo {
        return fdiv(lo, total);
    } else if total != 0.0 && total > hi {
        return fdiv(hi, total);
    }
    return 1.0;
}

// The kind's law (twin of `<MjGeneralCfg as Kind>::law`): forwards MuJoCo's
// ctrl; `mj_env_stage` in step.wgsl computes the force.
fn mj_general_law() -> f32 {
    return io_target(io_field());
}
