//! MuJoCo 4's stateful actuators, `<pid>` and `<dcmotor>`, on joint
//! transmissions: each (env, joint) one actuator with its gear, its
//! controls from the command (pos → `position_target`, vel →
//! `velocity_target`, ff → `effort_target`) and the `voltage` input plane,
//! and its activation slots as named state.
//!
//! The column is the joint torque `gear·f` (MuJoCo's `qfrc_actuator` of the
//! joint); the output planes carry the actuator-space force `f`
//! (`actuator_force`) and each slot's rate (`act_dot_<slot>`). Every slot
//! exists on every column and is used only when its switch is on
//! (MuJoCo's layout: slew when `slewmax > 0`, integral when `ki > 0`,
//! temperature when `thermal_resistance > 0`, bristle when `sigma0 > 0`,
//! current when `te > 0`); a switched-off slot keeps its reset value.
//! Which controls an actuator has (MuJoCo's `input`) is fixed per group.

use super::ideal_pd::clip;
use super::spec::{
    param, param_slot, plane_slot, state_slot, zeroed_plane, zeroed_state, Domain, Kind, LawIo,
    ParamSpec, PlaneSpec, StateSpec, RAW_FORCE,
};
use super::{invalid, CommandField};
use crate::error::Error;

mod dcmotor;
mod mjcf;
mod mjlab;
mod pid;

pub use dcmotor::{DcMotorBias, MjDcMotorCfg};
pub use mjcf::{DcMotorMjcf, PidMjcf};
pub use mjlab::{DcMotorMode, DcMotorParams, MjlabDcMotor};
pub use pid::MjPidCfg;

/// MuJoCo's control inputs of an actuator (`mjtCtrlInput` bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CtrlInputs(pub u32);

impl CtrlInputs {
    /// A position setpoint (`pos`).
    pub const POS: u32 = 1;
    /// A velocity setpoint (`vel`).
    pub const VEL: u32 = 2;
    /// A feed-forward torque (`ff`).
    pub const FF: u32 = 4;
    /// A raw voltage (`voltage`, dcmotor only).
    pub const VOLTAGE: u32 = 8;
    /// No input (`none`, dcmotor only).
    pub const NONE: u32 = 16;

    /// Reads MuJoCo's `input` attribute: any of `pos vel ff voltage`, or `none`.
    pub fn parse(text: &str) -> Option<CtrlInputs> {
        let mut bits = 0;
        for word in text.split_whitespace() {
            bits |= match word {
                "pos" => Self::POS,
                "vel" => Self::VEL,
                "ff" => Self::FF,
                "voltage" => Self::VOLTAGE,
                "none" => Self::NONE,
                _ => return None,
            };
        }
        Some(CtrlInputs(bits))
    }

    /// True when `bit` is present.
    pub fn has(self, bit: u32) -> bool {
        self.0 & bit != 0
    }
}

/// The `voltage` input plane (V).
pub const VOLTAGE: PlaneSpec = zeroed_plane("voltage", "V", "a dcmotor's raw voltage control");

/// MuJoCo's `expm1`-free `e^x − 1` with full f32 accuracy near 0: a Taylor
/// series below |x| = 0.1, `exp(x) − 1` above (shared with the WGSL twin).
/// Both are computed and one kept, so a loop over it stays in vector lanes.
#[inline(always)]
pub fn expm1(x: f32) -> f32 {
    let x2 = x * x;
    let series =
        x + x2 * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0 + x * (1.0 / 120.0 + x * (1.0 / 720.0)))));
    let far = crate::math::exp(x) - 1.0;
    if x.abs() < 0.1 {
        series
    } else {
        far
    }
}

/// MuJoCo's slew limit of the first control (Part 5.3): the limited value
/// and the slot's rate. MuJoCo clips the value to `z ± rate·h` and takes
/// the rate as `(u0' − z)/h`; in f32 that difference loses `ulp(z)/h`, so
/// the rate is clipped instead (`±rate` exactly when the limit acts, as
/// MuJoCo's f64 gives) and the value follows from it.
#[inline(always)]
fn slew(u0: f32, z: f32, rate: f32, h: f32) -> (f32, f32) {
    let limit = rate;
    let rate = (u0 - z) / h;
    if rate > limit || rate < -limit {
        let rate = clip(rate, -limit, limit);
        (z + rate * h, rate)
    } else {
        (u0, rate)
    }
}

/// The integral's rate with MuJoCo's anti-windup (`≥`/`≤` at ±limit; a
/// limit ≤ 0 is off).
#[inline(always)]
fn windup(error: f32, z: f32, limit: f32) -> f32 {
    if limit > 0.0 {
        if z >= limit {
            return error.min(0.0);
        }
        if z <= -limit {
            return error.max(0.0);
        }
    }
    error
}

/// MuJoCo's slew slot (Part 5.3) on the first control of `u`: limits it in
/// place, writes the slot's next value clamped to `range` (a pid's
/// actrange; unlimited for a dcmotor) and returns the slot's rate, 0 when
/// `slewmax ≤ 0` turns it off (the slot then keeps its value). Computed
/// either way and one result kept, as in the laws that call it: a branch
/// would keep their loops one element at a time.
#[inline(always)]
fn slew_first<I: LawIo>(
    io: &mut I,
    u: &mut [f32; 3],
    bits: u32,
    slewmax: f32,
    h: f32,
    range: [f32; 2],
) -> f32 {
    const SLOT: usize = state_slot(&STATE, "slew");
    let on = slewmax > 0.0;
    let first = first_control(bits);
    let z = io.state(SLOT);
    let u_first = match first {
        0 => u[0],
        1 => u[1],
        _ => u[2],
    };
    let (limited, rate) = slew(u_first, z, slewmax, h);
    for (k, u) in u.iter_mut().enumerate() {
        *u = if on && k == first { limited } else { *u };
    }
    let next = clip(z + rate * h, range[0], range[1]);
    io.set_state(SLOT, if on { next } else { z });
    if on {
        rate
    } else {
        0.0
    }
}

/// MuJoCo's integral slot when `on` (`ki > 0`): the rate `error` with the
/// anti-windup at `limit`, the next value (Euler) clamped to `range`,
/// written; returns `(rate, next)`. Off, the slot keeps its value `z` and
/// this returns `(0, z)`.
#[inline(always)]
fn integrate<I: LawIo>(
    io: &mut I,
    on: bool,
    error: f32,
    limit: f32,
    h: f32,
    range: [f32; 2],
) -> (f32, f32) {
    const SLOT: usize = state_slot(&STATE, "integral");
    let z = io.state(SLOT);
    let rate = windup(error, z, limit);
    let next = clip(z + rate * h, range[0], range[1]);
    let (rate, next) = if on { (rate, next) } else { (0.0, z) };
    io.set_state(SLOT, next);
    (rate, next)
}

/// The state slots, in MuJoCo's slot order.
pub const STATE: [StateSpec; 5] = [
    zeroed_state("slew", "input unit", "last rate-limited first control"),
    zeroed_state("integral", "rad·s", "integral of the position error"),
    zeroed_state("temperature", "K", "winding temperature rise above ambient"),
    zeroed_state("bristle", "rad", "LuGre bristle deflection"),
    zeroed_state("current", "A", "armature current"),
];

/// The output planes: MuJoCo's `actuator_force` and `act_dot`s, and the
/// raw force through which both kinds join the plan's force coupling.
pub const OUTPUTS: [PlaneSpec; 7] = [
    zeroed_plane(
        "actuator_force",
        "N·m",
        "MuJoCo's actuator_force (actuator space)",
    ),
    zeroed_plane("act_dot_slew", "input unit/s", "the slew slot's rate"),
    zeroed_plane("act_dot_integral", "rad", "the integral slot's rate"),
    zeroed_plane("act_dot_temperature", "K/s", "the temperature slot's rate"),
    zeroed_plane("act_dot_bristle", "rad/s", "the bristle slot's rate"),
    zeroed_plane("act_dot_current", "A/s", "the current slot's rate"),
    RAW_FORCE,
];

fn one() -> f32 {
    1.0
}
fn unlimited() -> [f32; 2] {
    [f32::NEG_INFINITY, f32::INFINITY]
}
fn pos_vel() -> CtrlInputs {
    CtrlInputs(CtrlInputs::POS | CtrlInputs::VEL)
}
fn voltage_only() -> CtrlInputs {
    CtrlInputs(CtrlInputs::VOLTAGE)
}

mod inputs_text {
    use super::CtrlInputs;

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<CtrlInputs, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(d)?;
        CtrlInputs::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "input `{text}`: give any of pos, vel, ff, voltage, or none"
            ))
        })
    }
}

/// The first present control among pos, vel, ff (its index in `[pos, vel,
/// ff]`; MuJoCo's slew target).
#[inline(always)]
fn first_control(bits: u32) -> usize {
    if bits & CtrlInputs::POS != 0 {
        0
    } else if bits & CtrlInputs::VEL != 0 {
        1
    } else {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expm1_is_accurate_near_zero_and_exact_enough_far_from_it() {
        for x in [1e-8f32, -3e-5, 0.05, -0.099, 0.1, -0.5, 2.0, -30.0] {
            let want = f64::from(x).exp_m1();
            approx::assert_relative_eq!(f64::from(expm1(x)), want, max_relative = 2e-6);
        }
    }

    #[test]
    fn inputs_parse_like_mujoco() {
        assert_eq!(CtrlInputs::parse("pos vel"), Some(CtrlInputs(3)));
        assert_eq!(CtrlInputs::parse("voltage"), Some(CtrlInputs(8)));
        assert_eq!(CtrlInputs::parse("none"), Some(CtrlInputs(16)));
        assert_eq!(CtrlInputs::parse("torque"), None);
    }
}
