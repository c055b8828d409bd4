//! The compiled actuator record both backends read and MuJoCo's force
//! law over it: activation dynamics, gain, bias, the clamps.

use super::*;

/// One compiled MuJoCo actuator, as both backends read it (WGSL `MjActuator`
/// in `shaders/mujoco.wgsl`; `tests/shaders.rs` checks the layout).
#[derive(Debug, Clone, Copy, PartialEq, Default, Pod, Zeroable)]
#[repr(C)]
pub struct MjActuator {
    /// Its ctrl column.
    pub ctrl_column: u32,
    /// First entry of its transmission path in the plan's path table.
    pub path_offset: u32,
    /// Path entries: 1 for a joint, the tendon's joints for a fixed tendon,
    /// 0 for a site.
    pub path_len: u32,
    /// [`DynType`] discriminant.
    pub dyn_type: u32,
    /// [`GainType`] discriminant.
    pub gain_type: u32,
    /// [`BiasType`] discriminant.
    pub bias_type: u32,
    /// `MJ_*` flag bits.
    pub flags: u32,
    /// `gear[0]`.
    pub gear: f32,
    /// What multiplies `act_dot` in the next activation: `h` (Euler), or
    /// `τ·(1 − e^{−h/τ})` for `filterexact`, computed in f64.
    pub act_step: f32,
    /// `ctrlrange[0]` (0 when not limited).
    pub ctrl_lo: f32,
    /// `ctrlrange[1]`.
    pub ctrl_hi: f32,
    /// `forcerange[0]`.
    pub force_lo: f32,
    /// `forcerange[1]`.
    pub force_hi: f32,
    /// `actrange[0]`.
    pub act_lo: f32,
    /// `actrange[1]`.
    pub act_hi: f32,
    /// `lengthrange[0]`.
    pub length_lo: f32,
    /// `lengthrange[1]`.
    pub length_hi: f32,
    /// `acc0`.
    pub acc0: f32,
    /// `dynprm[0..3]`.
    pub dynprm: [f32; 3],
    /// `gainprm[0..9]`.
    pub gainprm: [f32; 9],
    /// `biasprm[0..9]`.
    pub biasprm: [f32; 9],
    /// MuJoCo's timestep `h`.
    pub timestep: f32,
}

impl MjActuator {
    /// This actuator with one env's parameters (`row(slot)`: the env's
    /// value of [`MjGeneralCfg`]'s parameter slot `slot`): every range
    /// applied (±inf where unlimited, which clamps nothing), and
    /// `filterexact`'s step recomputed when the env's `dynprm[0]` is not the
    /// compiled one.
    #[inline]
    pub fn with_params(&self, row: impl Fn(usize) -> f32) -> MjActuator {
        let mut a = *self;
        for k in 0..9 {
            a.gainprm[k] = row(MJ_SLOT_GAIN + k);
            a.biasprm[k] = row(MJ_SLOT_BIAS + k);
        }
        for k in 0..3 {
            a.dynprm[k] = row(MJ_SLOT_DYN + k);
        }
        a.gear = row(MJ_SLOT_GEAR);
        [
            a.ctrl_lo, a.ctrl_hi, a.force_lo, a.force_hi, a.act_lo, a.act_hi,
        ] = std::array::from_fn(|i| row(MJ_SLOT_RANGES + i));
        a.flags |= MJ_CTRL_LIMITED | MJ_FORCE_LIMITED | MJ_ACT_LIMITED;
        if a.dyn_type == DynType::FilterExact as u32 && a.dynprm[0] != self.dynprm[0] {
            a.act_step = filter_exact_step(a.dynprm[0], a.timestep);
        }
        a
    }
}

/// What one actuator's law yields before the tendon and force limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MjOut {
    /// `gain·input + bias`.
    pub force: f32,
    /// `act_dot` (0 without dynamics).
    pub act_dot: f32,
    /// The activation after the step (the input when stateless).
    pub act_next: f32,
}

/// `max(MINVAL, x)` written as MuJoCo's guard, NaN passing through.
#[inline(always)]
pub fn mj_floor(x: f32) -> f32 {
    if x < MJ_MINVAL {
        MJ_MINVAL
    } else {
        x
    }
}

/// MuJoCo's muscle force–length curve on the normalized length `l`.
#[inline(always)]
pub fn mj_muscle_gain_length(l: f32, lmin: f32, lmax: f32) -> f32 {
    if l < lmin || l > lmax {
        return 0.0;
    }
    let a = 0.5 * (lmin + 1.0);
    let b = 0.5 * (1.0 + lmax);
    if l <= a {
        let x = (l - lmin) / mj_floor(a - lmin);
        0.5 * x * x
    } else if l <= 1.0 {
        let x = (1.0 - l) / mj_floor(1.0 - a);
        1.0 - 0.5 * x * x
    } else if l <= b {
        let x = (l - 1.0) / mj_floor(b - 1.0);
        1.0 - 0.5 * x * x
    } else {
        let x = (lmax - l) / mj_floor(lmax - b);
        0.5 * x * x
    }
}

/// Peak muscle force: `prm[2]`, or `prm[3] / acc0` when `prm[2] < 0`.
#[inline(always)]
pub fn mj_muscle_peak(prm: &[f32; 9], acc0: f32) -> f32 {
    if prm[2] < 0.0 {
        prm[3] / mj_floor(acc0)
    } else {
        prm[2]
    }
}

/// Optimal length `L0` of a muscle (actuator-length units).
#[inline(always)]
pub fn mj_muscle_l0(prm: &[f32; 9], length_lo: f32, length_hi: f32) -> f32 {
    (length_hi - length_lo) / mj_floor(prm[1] - prm[0])
}

/// MuJoCo's muscle active gain `−F0·FL(L)·FV(V)` (`mju_muscleGain`).
#[inline(always)]
pub fn mj_muscle_gain(
    length: f32,
    velocity: f32,
    length_lo: f32,
    length_hi: f32,
    acc0: f32,
    prm: &[f32; 9],
) -> f32 {
    let f0 = mj_muscle_peak(prm, acc0);
    let l0 = mj_muscle_l0(prm, length_lo, length_hi);
    let l = prm[0] + (length - length_lo) / mj_floor(l0);
    let v = velocity / mj_floor(l0 * prm[6]);
    let fl = mj_muscle_gain_length(l, prm[4], prm[5]);
    let y = prm[8] - 1.0;
    let fv = if v <= -1.0 {
        0.0
    } else if v <= 0.0 {
        (v + 1.0) * (v + 1.0)
    } else if v <= y {
        prm[8] - (y - v) * (y - v) / mj_floor(y)
    } else {
        prm[8]
    };
    -f0 * fl * fv
}

/// MuJoCo's muscle passive force (`mju_muscleBias`).
#[inline(always)]
pub fn mj_muscle_bias(
    length: f32,
    length_lo: f32,
    length_hi: f32,
    acc0: f32,
    prm: &[f32; 9],
) -> f32 {
    let f0 = mj_muscle_peak(prm, acc0);
    let l0 = mj_muscle_l0(prm, length_lo, length_hi);
    let l = prm[0] + (length - length_lo) / mj_floor(l0);
    let b = 0.5 * (1.0 + prm[5]);
    if l <= 1.0 {
        0.0
    } else if l <= b {
        let x = (l - 1.0) / mj_floor(b - 1.0);
        -f0 * prm[7] * 0.5 * x * x
    } else {
        let x = (l - b) / mj_floor(b - 1.0);
        -f0 * prm[7] * (0.5 + x)
    }
}

/// The quintic smoothstep of MuJoCo's muscle time constant.
#[inline(always)]
pub fn mj_sigmoid(x: f32) -> f32 {
    if x <= 0.0 {
        0.0
    } else if x >= 1.0 {
        1.0
    } else {
        x * x * x * (3.0 * x * (2.0 * x - 5.0) + 10.0)
    }
}

/// MuJoCo's muscle activation dynamics (`mju_muscleDynamics`): the rate
/// uses the clamped activation for the time constants and the raw one in
/// `ctrl − act`.
#[inline(always)]
pub fn mj_muscle_dynamics(ctrl: f32, act: f32, dynprm: &[f32; 3]) -> f32 {
    let c = clip(ctrl, 0.0, 1.0);
    let a = clip(act, 0.0, 1.0);
    let tau_act = dynprm[0] * (0.5 + 1.5 * a);
    let tau_deact = dynprm[1] / (0.5 + 1.5 * a);
    let width = dynprm[2];
    let dctrl = c - act;
    let tau = if width < MJ_MINVAL {
        if dctrl > 0.0 {
            tau_act
        } else {
            tau_deact
        }
    } else {
        tau_deact + (tau_act - tau_deact) * mj_sigmoid(dctrl / width + 0.5)
    };
    dctrl / mj_floor(tau)
}

/// `act_dot` of one actuator for the (clamped) control and the activation.
#[inline(always)]
pub fn mj_act_dot(a: &MjActuator, ctrl: f32, act: f32) -> f32 {
    match a.dyn_type {
        x if x == DynType::Integrator as u32 => ctrl,
        x if x == DynType::Filter as u32 || x == DynType::FilterExact as u32 => {
            (ctrl - act) / mj_floor(a.dynprm[0])
        }
        x if x == DynType::Muscle as u32 => mj_muscle_dynamics(ctrl, act, &a.dynprm),
        _ => 0.0,
    }
}

/// The activation after one step (`mj_advance`), clamped to `actrange`.
#[inline(always)]
pub fn mj_next_act(a: &MjActuator, act: f32, act_dot: f32) -> f32 {
    let next = act + act_dot * a.act_step;
    if a.flags & MJ_ACT_LIMITED != 0 {
        clip(next, a.act_lo, a.act_hi)
    } else {
        next
    }
}

/// The control after `ctrlrange`.
#[inline]
pub fn mj_ctrl(a: &MjActuator, ctrl: f32) -> f32 {
    if a.flags & MJ_CTRL_LIMITED != 0 {
        clip(ctrl, a.ctrl_lo, a.ctrl_hi)
    } else {
        ctrl
    }
}

/// MuJoCo's force law for one actuator: the clamped control `ctrl`, the
/// activation `act` (raw, possibly outside `actrange`), and the actuator
/// length and velocity. The tendon and force limits come after.
#[inline(always)]
pub fn mj_force(a: &MjActuator, ctrl: f32, act: f32, length: f32, velocity: f32) -> MjOut {
    let first = |prm: &[f32; 9]| [prm[0], prm[1], prm[2]];
    let (gain3, bias3) = (first(&a.gainprm), first(&a.biasprm));
    mj_force_with(a, gain3, bias3, ctrl, act, length, velocity)
}

/// [`mj_force`] with `gainprm[0..3]` and `biasprm[0..3]` given (an env's
/// values from the parameter table) in place of the compiled ones.
#[inline(always)]
pub fn mj_force_with(
    a: &MjActuator,
    gain3: [f32; 3],
    bias3: [f32; 3],
    ctrl: f32,
    act: f32,
    length: f32,
    velocity: f32,
) -> MjOut {
    let with = |prm: &[f32; 9], first: [f32; 3]| {
        let mut all = *prm;
        all[..3].copy_from_slice(&first);
        all
    };
    let act_dot = mj_act_dot(a, ctrl, act);
    let act_next = mj_next_act(a, act, act_dot);
    let dc_stateless = a.dynprm[0] <= 0.0;
    let gain = match a.gain_type {
        x if x == GainType::Affine as u32 => gain3[0] + gain3[1] * length + gain3[2] * velocity,
        x if x == GainType::DcMotor as u32 && dc_stateless => gain3[1] / mj_floor(gain3[0]),
        x if x == GainType::DcMotor as u32 => gain3[1],
        x if x == GainType::Muscle as u32 => mj_muscle_gain(
            length,
            velocity,
            a.length_lo,
            a.length_hi,
            a.acc0,
            &with(&a.gainprm, gain3),
        ),
        _ => gain3[0],
    };
    let input = if a.dyn_type == DynType::None as u32
        || (a.gain_type == GainType::DcMotor as u32 && dc_stateless)
    {
        ctrl
    } else if a.flags & MJ_ACT_EARLY != 0 {
        act_next
    } else {
        act
    };
    let mut force = gain * input;
    match a.bias_type {
        x if x == BiasType::Affine as u32 => {
            force += bias3[0] + bias3[1] * length + bias3[2] * velocity;
        }
        x if x == BiasType::Muscle as u32 => {
            let prm = with(&a.biasprm, bias3);
            force += mj_muscle_bias(length, a.length_lo, a.length_hi, a.acc0, &prm);
        }
        x if x == BiasType::DcMotor as u32 && dc_stateless => {
            force += 0.0 - gain * gain3[1] * velocity;
        }
        _ => {}
    }
    MjOut {
        force,
        act_dot,
        act_next,
    }
}

/// The force after `forcerange`.
#[inline]
pub fn mj_force_limit(a: &MjActuator, force: f32) -> f32 {
    if a.flags & MJ_FORCE_LIMITED != 0 {
        clip(force, a.force_lo, a.force_hi)
    } else {
        force
    }
}

/// What MuJoCo adds to a force after its force-range clamp: a `dcmotor`
/// bias's cogging torque `biasprm[0]·sin(biasprm[1]·length + biasprm[2])`
/// ([`crate::math::sin`]: the same bits on every CPU, and in vector lanes).
#[inline(always)]
pub fn mj_force_after(a: &MjActuator, force: f32, length: f32) -> f32 {
    let b = &a.biasprm;
    if a.bias_type == BiasType::DcMotor as u32 && b[0] != 0.0 {
        force + b[0] * crate::math::sin(b[1] * length + b[2])
    } else {
        force
    }
}

/// The factor a tendon's `actuatorfrcrange` applies to every force on the
/// tendon, given their sum (1 inside the range or when the sum is 0).
#[inline]
pub fn mj_tendon_scale(total: f32, lo: f32, hi: f32) -> f32 {
    if total != 0.0 && total < lo {
        lo / total
    } else if total != 0.0 && total > hi {
        hi / total
    } else {
        1.0
    }
}
