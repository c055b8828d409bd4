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
#[inline(always)]
pub fn expm1(x: f32) -> f32 {
    if x.abs() < 0.1 {
        let x2 = x * x;
        x + x2 * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0 + x * (1.0 / 120.0 + x * (1.0 / 720.0)))))
    } else {
        x.exp() - 1.0
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
/// `slewmax ≤ 0` turns it off.
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
    if slewmax <= 0.0 {
        return 0.0;
    }
    let first = first_control(bits);
    let z = io.state(SLOT);
    let (limited, rate) = slew(u[first], z, slewmax, h);
    u[first] = limited;
    io.set_state(SLOT, clip(z + rate * h, range[0], range[1]));
    rate
}

/// MuJoCo's integral slot: the rate `error` with the anti-windup at
/// `limit`, the next value (Euler) clamped to `range`, written; returns
/// `(rate, next)`.
#[inline(always)]
fn integrate<I: LawIo>(io: &mut I, error: f32, limit: f32, h: f32, range: [f32; 2]) -> (f32, f32) {
    const SLOT: usize = state_slot(&STATE, "integral");
    let z = io.state(SLOT);
    let rate = windup(error, z, limit);
    let next = clip(z + rate * h, range[0], range[1]);
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

/// MuJoCo 4's `<pid>`: `f = kp(u_pos − L) + kv(u_vel − V) + u_ff + ki·z + b0`
/// with `L = gear·q`, `V = gear·q̇`, the controls clamped each by its own
/// range, the first one rate-limited by `slewmax` (slot `slew`), the
/// integral `z` of `u_pos − L` with MuJoCo's anti-windup at `imax` (slot
/// `integral`, Euler, not clamped; `actearly` reads the next value), both
/// slots clamped to `[act_lo, act_hi]`, then `forcerange`. Part 5.4 of the
/// reference.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MjPidCfg {
    /// Which controls it has (`input`, default `pos vel`).
    #[serde(default = "pos_vel", with = "inputs_text", alias = "input")]
    pub inputs: CtrlInputs,
    /// `kp` (N·m/rad; MuJoCo's default 1; may be negative).
    #[serde(default = "one")]
    pub kp: f32,
    /// `kv` (N·m·s/rad).
    #[serde(default)]
    pub kv: f32,
    /// `ki` (N·m/(rad·s)), ≥ 0; > 0 adds the integral slot.
    #[serde(default)]
    pub ki: f32,
    /// Anti-windup limit (rad·s); ≤ 0 is off.
    #[serde(default)]
    pub imax: f32,
    /// Rate limit of the first control (its unit per s); ≤ 0 is off.
    #[serde(default)]
    pub slewmax: f32,
    /// A constant bias `b0` (N·m; `<general>` only).
    #[serde(default)]
    pub bias0: f32,
    /// The gear.
    #[serde(default = "one")]
    pub gear: f32,
    /// `forcerange` (±inf where unlimited).
    #[serde(default = "unlimited")]
    pub force_range: [f32; 2],
    /// The `pos` control's range.
    #[serde(default = "unlimited")]
    pub pos_range: [f32; 2],
    /// The `vel` control's range.
    #[serde(default = "unlimited")]
    pub vel_range: [f32; 2],
    /// The `ff` control's range.
    #[serde(default = "unlimited")]
    pub ff_range: [f32; 2],
    /// `actrange` of both slots (`<general>` only).
    #[serde(default = "unlimited")]
    pub act_range: [f32; 2],
    /// `actearly` (`<general>` only): the force reads the next integral.
    #[serde(default)]
    pub act_early: bool,
    /// MuJoCo's timestep `h` (s).
    pub timestep: f32,
}

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

impl MjPidCfg {
    /// A pid with these gains on the `pos vel` inputs, nothing else limited.
    pub fn new(kp: f32, kv: f32, timestep: f32) -> Self {
        MjPidCfg {
            inputs: pos_vel(),
            kp,
            kv,
            ki: 0.0,
            imax: 0.0,
            slewmax: 0.0,
            bias0: 0.0,
            gear: 1.0,
            force_range: unlimited(),
            pos_range: unlimited(),
            vel_range: unlimited(),
            ff_range: unlimited(),
            act_range: unlimited(),
            act_early: false,
            timestep,
        }
    }
}

impl Kind for MjPidCfg {
    const NAME: &'static str = "MjPid";
    const KEY: &'static str = "mj_pid";
    const PARAMS: &'static [ParamSpec] = &[
        param("kp", "N·m/rad", "proportional gain", Domain::Finite),
        param("kv", "N·m·s/rad", "derivative gain", Domain::Finite),
        param("ki", "N·m/(rad·s)", "integral gain", Domain::NonNegative),
        param(
            "imax",
            "rad·s",
            "anti-windup limit (<= 0: off)",
            Domain::Finite,
        ),
        param(
            "slewmax",
            "1/s",
            "first control's rate limit (<= 0: off)",
            Domain::Finite,
        ),
        param("bias0", "N·m", "constant bias", Domain::Finite),
        param("gear", "1", "gear", Domain::Finite),
        param("force_lo", "N·m", "forcerange low", Domain::Extended),
        param("force_hi", "N·m", "forcerange high", Domain::Extended),
        param("pos_lo", "rad", "pos control range low", Domain::Extended),
        param("pos_hi", "rad", "pos control range high", Domain::Extended),
        param("vel_lo", "rad/s", "vel control range low", Domain::Extended),
        param(
            "vel_hi",
            "rad/s",
            "vel control range high",
            Domain::Extended,
        ),
        param("ff_lo", "N·m", "ff control range low", Domain::Extended),
        param("ff_hi", "N·m", "ff control range high", Domain::Extended),
        param("act_lo", "1", "actrange low", Domain::Extended),
        param("act_hi", "1", "actrange high", Domain::Extended),
        param(
            "act_early",
            "0/1",
            "force from the next integral",
            Domain::Finite,
        ),
        param("timestep", "s", "MuJoCo's timestep", Domain::Positive),
    ];
    const STATE: &'static [StateSpec] = &[STATE[0], STATE[1]];
    const READS: &'static [CommandField] = &CommandField::ALL;
    const OUTPUTS: &'static [PlaneSpec] = &[OUTPUTS[0], OUTPUTS[1], OUTPUTS[2], OUTPUTS[6]];
    const WGSL: &'static str = include_str!("../../../../shaders/mj_stateful.wgsl");

    fn param_value(&self, k: usize) -> f32 {
        [
            self.kp,
            self.kv,
            self.ki,
            self.imax,
            self.slewmax,
            self.bias0,
            self.gear,
            self.force_range[0],
            self.force_range[1],
            self.pos_range[0],
            self.pos_range[1],
            self.vel_range[0],
            self.vel_range[1],
            self.ff_range[0],
            self.ff_range[1],
            self.act_range[0],
            self.act_range[1],
            f32::from(u8::from(self.act_early)),
            self.timestep,
        ][k]
    }

    fn from_fields<'de, D: serde::Deserializer<'de>>(fields: D) -> Result<Self, D::Error> {
        <Self as serde::Deserialize>::deserialize(fields)
    }

    fn example() -> Self {
        let mut pid = MjPidCfg::new(40.0, 2.0, 0.002);
        pid.ki = 5.0;
        pid.imax = 0.5;
        pid.slewmax = 20.0;
        pid.force_range = [-30.0, 30.0];
        pid
    }

    fn group_data(&self) -> Vec<f32> {
        vec![self.inputs.0 as f32]
    }

    fn validate(&self, group: &str) -> Result<(), Error> {
        let bits = self.inputs.0;
        if bits & !(CtrlInputs::POS | CtrlInputs::VEL | CtrlInputs::FF) != 0 {
            return Err(invalid(
                group,
                "input",
                bits as f32,
                "a pid takes pos, vel and ff inputs only",
            ));
        }
        if self.ki > 0.0 && !self.inputs.has(CtrlInputs::POS) {
            return Err(invalid(
                group,
                "ki",
                self.ki,
                "an integral needs the pos input",
            ));
        }
        Ok(())
    }

    #[inline(always)]
    fn law<I: LawIo>(io: &mut I) -> f32 {
        const KP: usize = param_slot(MjPidCfg::PARAMS, "kp");
        const KV: usize = param_slot(MjPidCfg::PARAMS, "kv");
        const KI: usize = param_slot(MjPidCfg::PARAMS, "ki");
        const IMAX: usize = param_slot(MjPidCfg::PARAMS, "imax");
        const SLEW: usize = param_slot(MjPidCfg::PARAMS, "slewmax");
        const B0: usize = param_slot(MjPidCfg::PARAMS, "bias0");
        const GEAR: usize = param_slot(MjPidCfg::PARAMS, "gear");
        const F_LO: usize = param_slot(MjPidCfg::PARAMS, "force_lo");
        const F_HI: usize = param_slot(MjPidCfg::PARAMS, "force_hi");
        const POS_LO: usize = param_slot(MjPidCfg::PARAMS, "pos_lo");
        const POS_HI: usize = param_slot(MjPidCfg::PARAMS, "pos_hi");
        const VEL_LO: usize = param_slot(MjPidCfg::PARAMS, "vel_lo");
        const VEL_HI: usize = param_slot(MjPidCfg::PARAMS, "vel_hi");
        const FF_LO: usize = param_slot(MjPidCfg::PARAMS, "ff_lo");
        const FF_HI: usize = param_slot(MjPidCfg::PARAMS, "ff_hi");
        const ACT_LO: usize = param_slot(MjPidCfg::PARAMS, "act_lo");
        const ACT_HI: usize = param_slot(MjPidCfg::PARAMS, "act_hi");
        const EARLY: usize = param_slot(MjPidCfg::PARAMS, "act_early");
        const H: usize = param_slot(MjPidCfg::PARAMS, "timestep");
        const S_INT: usize = state_slot(&STATE, "integral");
        const RAW: usize = plane_slot(MjPidCfg::OUTPUTS, RAW_FORCE.name);
        let bits = io.data(0) as u32;
        let gear = io.param(GEAR);
        let (length, velocity) = (gear * io.pos(), gear * io.vel());
        let control = |io: &I, bit: u32, field: CommandField, lo: usize, hi: usize| {
            if bits & bit != 0 {
                clip(io.target(field), io.param(lo), io.param(hi))
            } else {
                0.0
            }
        };
        let mut u = [
            control(io, CtrlInputs::POS, CommandField::Position, POS_LO, POS_HI),
            control(io, CtrlInputs::VEL, CommandField::Velocity, VEL_LO, VEL_HI),
            control(io, CtrlInputs::FF, CommandField::Effort, FF_LO, FF_HI),
        ];
        let h = io.param(H);
        let (act_lo, act_hi) = (io.param(ACT_LO), io.param(ACT_HI));
        let slew_dot = slew_first(io, &mut u, bits, io.param(SLEW), h, [act_lo, act_hi]);
        let ki = io.param(KI);
        let mut integral = io.state(S_INT);
        let mut int_dot = 0.0;
        if ki > 0.0 {
            let error = u[0] - length;
            let (rate, next) = integrate(io, error, io.param(IMAX), h, [act_lo, act_hi]);
            int_dot = rate;
            if io.param(EARLY) != 0.0 {
                integral = next;
            }
        }
        let (kp, kv) = (io.param(KP), io.param(KV));
        let mut f = kp * u[0] + kv * u[1] + u[2];
        if ki > 0.0 {
            f += ki * integral;
        }
        f += io.param(B0) + (-kp) * length + (-kv) * velocity;
        let f = io.saturate(RAW, f, io.param(F_LO), io.param(F_HI));
        io.set_output(0, f);
        io.set_output(1, slew_dot);
        io.set_output(2, int_dot);
        gear * f
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

/// MuJoCo 4's `<dcmotor>` from its compiled parameters (Part 5.5): a DC
/// motor with back-EMF, an optional torque-space controller (`kp`, `ki`,
/// `kd` on the pos/vel/ff controls, back-EMF compensated with the nominal
/// `R`, clipped to `vmax`, plus the raw `voltage` control), slew on the
/// first control, an anti-windup integral clamped to `±imax`, inductance
/// (the `current` slot, exponential, rate-limited to `didt_max`), a thermal
/// model (`R_T = R·(1 + α(ΔT + T_a − T0))`, the `temperature` slot), the
/// saturation clamp `force_range`, then cogging `A·sin(N_p·L + φ)` and LuGre
/// friction (the `bristle` slot, exact zero-order hold) after it. `actearly`
/// is always on: with inductance the force is `K·i_next`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MjDcMotorCfg {
    /// Which controls it has (`input`, default `voltage`).
    #[serde(default = "voltage_only", with = "inputs_text", alias = "input")]
    pub inputs: CtrlInputs,
    /// Nominal winding resistance `R` (Ω), > 0.
    pub resistance: f32,
    /// Motor constant `K` (N·m/A = V·s/rad), ≥ 0.
    pub motorconst: f32,
    /// Resistance temperature coefficient `α` (1/K).
    #[serde(default)]
    pub alpha: f32,
    /// Reference temperature `T0` (°C).
    #[serde(default)]
    pub t0: f32,
    /// Controller `kp` (N·m/rad).
    #[serde(default)]
    pub kp: f32,
    /// Controller `ki` (N·m/(rad·s)); > 0 adds the integral slot.
    #[serde(default)]
    pub ki: f32,
    /// Controller `kd` (N·m·s/rad).
    #[serde(default)]
    pub kd: f32,
    /// Controller voltage limit (V); ≤ 0 is off.
    #[serde(default)]
    pub vmax: f32,
    /// Electrical time constant `t_e = L/R` (s); > 0 adds the current slot.
    #[serde(default)]
    pub te: f32,
    /// Current rate limit (A/s); ≤ 0 is off.
    #[serde(default)]
    pub didt_max: f32,
    /// Thermal resistance `R_T,th` (K/W); > 0 adds the temperature slot.
    #[serde(default)]
    pub thermal_resistance: f32,
    /// Thermal capacitance `C` (J/K), > 0 with a thermal model.
    #[serde(default)]
    pub thermal_capacitance: f32,
    /// Ambient temperature `T_a` (°C).
    #[serde(default)]
    pub ambient: f32,
    /// LuGre bristle stiffness `σ0` (N·m/rad); > 0 adds the bristle slot.
    #[serde(default)]
    pub sigma0: f32,
    /// LuGre bristle damping `σ1` (N·m·s/rad).
    #[serde(default)]
    pub sigma1: f32,
    /// Rate limit of the first control; ≤ 0 is off.
    #[serde(default)]
    pub slewmax: f32,
    /// The integral's clamp and anti-windup limit (rad·s); ≤ 0 is off.
    #[serde(default)]
    pub imax: f32,
    /// Cogging amplitude `A` (N·m).
    #[serde(default)]
    pub cogging_amplitude: f32,
    /// Cogging pole count `N_p`.
    #[serde(default)]
    pub cogging_poles: f32,
    /// Cogging phase `φ` (rad).
    #[serde(default)]
    pub cogging_phase: f32,
    /// LuGre Coulomb torque `τ_C` (N·m).
    #[serde(default)]
    pub tau_c: f32,
    /// LuGre static torque `τ_S` (N·m).
    #[serde(default)]
    pub tau_s: f32,
    /// LuGre Stribeck velocity `ω_S` (rad/s).
    #[serde(default)]
    pub omega_s: f32,
    /// The gear.
    #[serde(default = "one")]
    pub gear: f32,
    /// The saturation clamp of `f` (±τ_max; ±inf where unlimited).
    #[serde(default = "unlimited")]
    pub force_range: [f32; 2],
    /// The range every control is clamped to (`ctrlrange`, broadcast).
    #[serde(default = "unlimited")]
    pub ctrl_range: [f32; 2],
    /// MuJoCo's timestep `h` (s).
    pub timestep: f32,
    /// The bias of a `<general>` form with dcmotor dynamics and gain
    /// (`biastype`): MuJoCo's dcmotor bias (what `<dcmotor>` compiles to),
    /// none, or affine. Fixed per group.
    #[serde(default)]
    pub bias_type: DcMotorBias,
    /// `biasprm[0..3]` of an affine bias: `b0 + b1·L + b2·V` is added to
    /// the force before the saturation clamp. Fixed per group.
    #[serde(default)]
    pub affine_bias: [f32; 3],
}

/// The bias of an [`MjDcMotorCfg`] (MuJoCo's `biastype` beside a dcmotor
/// gain and dynamics).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DcMotorBias {
    /// The back-EMF `−(K²/R_T)·V` of a motor without inductance, then the
    /// cogging and LuGre torques after the saturation clamp.
    #[default]
    DcMotor,
    /// No bias: neither back-EMF nor cogging nor LuGre in the force.
    None,
    /// [`MjDcMotorCfg::affine_bias`] before the clamp; no back-EMF, cogging
    /// or LuGre in the force.
    Affine,
}

impl MjDcMotorCfg {
    /// A voltage-driven motor of resistance `R` and motor constant `K`,
    /// nothing else on.
    pub fn new(resistance: f32, motorconst: f32, timestep: f32) -> Self {
        MjDcMotorCfg {
            inputs: voltage_only(),
            resistance,
            motorconst,
            alpha: 0.0,
            t0: 0.0,
            kp: 0.0,
            ki: 0.0,
            kd: 0.0,
            vmax: 0.0,
            te: 0.0,
            didt_max: 0.0,
            thermal_resistance: 0.0,
            thermal_capacitance: 0.0,
            ambient: 0.0,
            sigma0: 0.0,
            sigma1: 0.0,
            slewmax: 0.0,
            imax: 0.0,
            cogging_amplitude: 0.0,
            cogging_poles: 0.0,
            cogging_phase: 0.0,
            tau_c: 0.0,
            tau_s: 0.0,
            omega_s: 0.0,
            gear: 1.0,
            force_range: unlimited(),
            ctrl_range: unlimited(),
            timestep,
            bias_type: DcMotorBias::DcMotor,
            affine_bias: [0.0; 3],
        }
    }

    /// From MuJoCo's compiled arrays (Part 5.2): `gainprm = [R, K, α, T0, kp,
    /// ki, kd, Vmax]`, `dynprm = [t_e, (di/dt)max, R_T, C, T_a, σ0, σ1,
    /// slewmax, Imax]`, `biasprm = [A, N_p, φ, τ_C, τ_S, ω_S]`.
    pub fn from_compiled(
        inputs: CtrlInputs,
        gainprm: &[f64],
        dynprm: &[f64],
        biasprm: &[f64],
        timestep: f32,
    ) -> Self {
        let at = |v: &[f64], k: usize| v.get(k).copied().unwrap_or(0.0) as f32;
        MjDcMotorCfg {
            inputs,
            resistance: at(gainprm, 0),
            motorconst: at(gainprm, 1),
            alpha: at(gainprm, 2),
            t0: at(gainprm, 3),
            kp: at(gainprm, 4),
            ki: at(gainprm, 5),
            kd: at(gainprm, 6),
            vmax: at(gainprm, 7),
            te: at(dynprm, 0),
            didt_max: at(dynprm, 1),
            thermal_resistance: at(dynprm, 2),
            thermal_capacitance: at(dynprm, 3),
            ambient: at(dynprm, 4),
            sigma0: at(dynprm, 5),
            sigma1: at(dynprm, 6),
            slewmax: at(dynprm, 7),
            imax: at(dynprm, 8),
            cogging_amplitude: at(biasprm, 0),
            cogging_poles: at(biasprm, 1),
            cogging_phase: at(biasprm, 2),
            tau_c: at(biasprm, 3),
            tau_s: at(biasprm, 4),
            omega_s: at(biasprm, 5),
            ..MjDcMotorCfg::new(0.0, 0.0, timestep)
        }
    }
}

impl Kind for MjDcMotorCfg {
    const NAME: &'static str = "MjDcMotor";
    const KEY: &'static str = "mj_dcmotor";
    const PARAMS: &'static [ParamSpec] = &[
        param("resistance", "Ω", "nominal resistance R", Domain::Positive),
        param(
            "motorconst",
            "N·m/A",
            "motor constant K",
            Domain::NonNegative,
        ),
        param(
            "alpha",
            "1/K",
            "resistance temperature coefficient",
            Domain::Finite,
        ),
        param("t0", "°C", "reference temperature", Domain::Finite),
        param("kp", "N·m/rad", "controller kp", Domain::Finite),
        param("ki", "N·m/(rad·s)", "controller ki", Domain::Finite),
        param("kd", "N·m·s/rad", "controller kd", Domain::Finite),
        param(
            "vmax",
            "V",
            "controller voltage limit (<= 0: off)",
            Domain::Finite,
        ),
        param(
            "te",
            "s",
            "electrical time constant (<= 0: no current slot)",
            Domain::Finite,
        ),
        param(
            "didt_max",
            "A/s",
            "current rate limit (<= 0: off)",
            Domain::Finite,
        ),
        param(
            "thermal_resistance",
            "K/W",
            "thermal resistance (<= 0: no thermal model)",
            Domain::Finite,
        ),
        param(
            "thermal_capacitance",
            "J/K",
            "thermal capacitance",
            Domain::Finite,
        ),
        param("ambient", "°C", "ambient temperature", Domain::Finite),
        param(
            "sigma0",
            "N·m/rad",
            "LuGre bristle stiffness (<= 0: no LuGre)",
            Domain::Finite,
        ),
        param(
            "sigma1",
            "N·m·s/rad",
            "LuGre bristle damping",
            Domain::Finite,
        ),
        param(
            "slewmax",
            "1/s",
            "first control's rate limit (<= 0: off)",
            Domain::Finite,
        ),
        param(
            "imax",
            "rad·s",
            "integral clamp (<= 0: off)",
            Domain::Finite,
        ),
        param(
            "cogging_amplitude",
            "N·m",
            "cogging amplitude A",
            Domain::Finite,
        ),
        param(
            "cogging_poles",
            "1",
            "cogging pole count N_p",
            Domain::Finite,
        ),
        param("cogging_phase", "rad", "cogging phase", Domain::Finite),
        param("tau_c", "N·m", "LuGre Coulomb torque", Domain::Finite),
        param("tau_s", "N·m", "LuGre static torque", Domain::Finite),
        param(
            "omega_s",
            "rad/s",
            "LuGre Stribeck velocity",
            Domain::Finite,
        ),
        param("gear", "1", "gear", Domain::Finite),
        param("force_lo", "N·m", "saturation low", Domain::Extended),
        param("force_hi", "N·m", "saturation high", Domain::Extended),
        param(
            "ctrl_lo",
            "1",
            "every control's range low",
            Domain::Extended,
        ),
        param(
            "ctrl_hi",
            "1",
            "every control's range high",
            Domain::Extended,
        ),
        param("timestep", "s", "MuJoCo's timestep", Domain::Positive),
    ];
    const STATE: &'static [StateSpec] = &STATE;
    const READS: &'static [CommandField] = &CommandField::ALL;
    const INPUTS: &'static [PlaneSpec] = &[VOLTAGE];
    const OUTPUTS: &'static [PlaneSpec] = &OUTPUTS;
    const WGSL: &'static str = include_str!("../../../../shaders/mj_stateful.wgsl");

    fn param_value(&self, k: usize) -> f32 {
        [
            self.resistance,
            self.motorconst,
            self.alpha,
            self.t0,
            self.kp,
            self.ki,
            self.kd,
            self.vmax,
            self.te,
            self.didt_max,
            self.thermal_resistance,
            self.thermal_capacitance,
            self.ambient,
            self.sigma0,
            self.sigma1,
            self.slewmax,
            self.imax,
            self.cogging_amplitude,
            self.cogging_poles,
            self.cogging_phase,
            self.tau_c,
            self.tau_s,
            self.omega_s,
            self.gear,
            self.force_range[0],
            self.force_range[1],
            self.ctrl_range[0],
            self.ctrl_range[1],
            self.timestep,
        ][k]
    }

    fn from_fields<'de, D: serde::Deserializer<'de>>(fields: D) -> Result<Self, D::Error> {
        <Self as serde::Deserialize>::deserialize(fields)
    }

    fn example() -> Self {
        // A small geared motor with every state on (the golden
        // `dc_slots_31_SITBC` family's shape).
        let mut m = MjDcMotorCfg::new(2.0, 0.05, 0.002);
        m.inputs = CtrlInputs(CtrlInputs::POS | CtrlInputs::VEL | CtrlInputs::VOLTAGE);
        (m.kp, m.ki, m.kd, m.vmax, m.imax, m.slewmax) = (2.0, 0.5, 0.05, 24.0, 0.2, 10.0);
        (m.te, m.didt_max) = (0.001, 2000.0);
        (
            m.alpha,
            m.t0,
            m.thermal_resistance,
            m.thermal_capacitance,
            m.ambient,
        ) = (0.0039, 25.0, 5.0, 20.0, 25.0);
        (m.sigma0, m.sigma1, m.tau_c, m.tau_s, m.omega_s) = (300.0, 0.2, 0.03, 0.05, 0.5);
        (m.cogging_amplitude, m.cogging_poles, m.cogging_phase) = (0.002, 12.0, 0.1);
        m.force_range = [-0.5, 0.5];
        m
    }

    fn group_data(&self) -> Vec<f32> {
        let [b0, b1, b2] = self.affine_bias;
        vec![
            self.inputs.0 as f32,
            self.bias_type as u32 as f32,
            b0,
            b1,
            b2,
        ]
    }

    fn validate(&self, group: &str) -> Result<(), Error> {
        let bits = self.inputs.0;
        let controller = bits & (CtrlInputs::POS | CtrlInputs::VEL | CtrlInputs::FF) != 0;
        if bits & CtrlInputs::NONE != 0 && bits != CtrlInputs::NONE {
            return Err(invalid(
                group,
                "input",
                bits as f32,
                "`none` excludes every other input",
            ));
        }
        if self.motorconst <= 0.0 && bits != CtrlInputs::NONE {
            return Err(invalid(
                group,
                "motorconst",
                self.motorconst,
                "a driven motor needs K > 0",
            ));
        }
        if self.ki != 0.0 && !self.inputs.has(CtrlInputs::POS) {
            return Err(invalid(
                group,
                "ki",
                self.ki,
                "an integral needs the pos input",
            ));
        }
        if self.slewmax > 0.0 && !controller {
            return Err(invalid(
                group,
                "slewmax",
                self.slewmax,
                "slew needs a pos, vel or ff input",
            ));
        }
        if self.thermal_resistance > 0.0 && self.thermal_capacitance <= 0.0 {
            return Err(invalid(
                group,
                "thermal_capacitance",
                self.thermal_capacitance,
                "a thermal model needs C > 0",
            ));
        }
        if let Some(&b) = self.affine_bias.iter().find(|b| !b.is_finite()) {
            return Err(invalid(group, "affine_bias", b, "must be finite"));
        }
        Ok(())
    }

    #[inline(always)]
    fn law<I: LawIo>(io: &mut I) -> f32 {
        const R: usize = param_slot(MjDcMotorCfg::PARAMS, "resistance");
        const K: usize = param_slot(MjDcMotorCfg::PARAMS, "motorconst");
        const ALPHA: usize = param_slot(MjDcMotorCfg::PARAMS, "alpha");
        const T0: usize = param_slot(MjDcMotorCfg::PARAMS, "t0");
        const KP: usize = param_slot(MjDcMotorCfg::PARAMS, "kp");
        const KI: usize = param_slot(MjDcMotorCfg::PARAMS, "ki");
        const KD: usize = param_slot(MjDcMotorCfg::PARAMS, "kd");
        const VMAX: usize = param_slot(MjDcMotorCfg::PARAMS, "vmax");
        const TE: usize = param_slot(MjDcMotorCfg::PARAMS, "te");
        const DIDT: usize = param_slot(MjDcMotorCfg::PARAMS, "didt_max");
        const RTH: usize = param_slot(MjDcMotorCfg::PARAMS, "thermal_resistance");
        const CTH: usize = param_slot(MjDcMotorCfg::PARAMS, "thermal_capacitance");
        const TA: usize = param_slot(MjDcMotorCfg::PARAMS, "ambient");
        const S0: usize = param_slot(MjDcMotorCfg::PARAMS, "sigma0");
        const S1: usize = param_slot(MjDcMotorCfg::PARAMS, "sigma1");
        const SLEW: usize = param_slot(MjDcMotorCfg::PARAMS, "slewmax");
        const IMAX: usize = param_slot(MjDcMotorCfg::PARAMS, "imax");
        const COG_A: usize = param_slot(MjDcMotorCfg::PARAMS, "cogging_amplitude");
        const COG_N: usize = param_slot(MjDcMotorCfg::PARAMS, "cogging_poles");
        const COG_P: usize = param_slot(MjDcMotorCfg::PARAMS, "cogging_phase");
        const TAU_C: usize = param_slot(MjDcMotorCfg::PARAMS, "tau_c");
        const TAU_S: usize = param_slot(MjDcMotorCfg::PARAMS, "tau_s");
        const OMEGA_S: usize = param_slot(MjDcMotorCfg::PARAMS, "omega_s");
        const GEAR: usize = param_slot(MjDcMotorCfg::PARAMS, "gear");
        const F_LO: usize = param_slot(MjDcMotorCfg::PARAMS, "force_lo");
        const F_HI: usize = param_slot(MjDcMotorCfg::PARAMS, "force_hi");
        const C_LO: usize = param_slot(MjDcMotorCfg::PARAMS, "ctrl_lo");
        const C_HI: usize = param_slot(MjDcMotorCfg::PARAMS, "ctrl_hi");
        const H: usize = param_slot(MjDcMotorCfg::PARAMS, "timestep");
        const S_INT: usize = state_slot(&STATE, "integral");
        const S_TEMP: usize = state_slot(&STATE, "temperature");
        const S_BRISTLE: usize = state_slot(&STATE, "bristle");
        const S_CURRENT: usize = state_slot(&STATE, "current");
        const RAW: usize = plane_slot(MjDcMotorCfg::OUTPUTS, RAW_FORCE.name);
        let bits = io.data(0) as u32;
        let gear = io.param(GEAR);
        let (length, velocity) = (gear * io.pos(), gear * io.vel());
        let (lo, hi) = (io.param(C_LO), io.param(C_HI));
        let control = |present: bool, value: f32| if present { clip(value, lo, hi) } else { 0.0 };
        let mut u = [
            control(
                bits & CtrlInputs::POS != 0,
                io.target(CommandField::Position),
            ),
            control(
                bits & CtrlInputs::VEL != 0,
                io.target(CommandField::Velocity),
            ),
            control(bits & CtrlInputs::FF != 0, io.target(CommandField::Effort)),
        ];
        let voltage = control(bits & CtrlInputs::VOLTAGE != 0, io.input(0));
        let h = io.param(H);
        // No clamp for a finite value (the WGSL twin's bounds as well).
        let unlimited = [f32::MIN, f32::MAX];
        let slew_dot = slew_first(io, &mut u, bits, io.param(SLEW), h, unlimited);
        // Integral, from its current value, clamped to ±imax.
        let ki = io.param(KI);
        let integral = io.state(S_INT);
        let mut int_dot = 0.0;
        if ki > 0.0 {
            let imax = io.param(IMAX);
            let range = if imax > 0.0 { [-imax, imax] } else { unlimited };
            int_dot = integrate(io, u[0] - length, imax, h, range).0;
        }
        // Resistance at the current temperature rise.
        let (r, k) = (io.param(R), io.param(K));
        let r_th = io.param(RTH);
        let dtemp = io.state(S_TEMP);
        let r_t = if r_th > 0.0 {
            r * (1.0 + io.param(ALPHA) * ((dtemp + io.param(TA)) - io.param(T0)))
        } else {
            r
        };
        // Drive voltage.
        let controller = bits & (CtrlInputs::POS | CtrlInputs::VEL | CtrlInputs::FF) != 0;
        let mut v = voltage;
        if controller {
            let tau = io.param(KP) * (u[0] - length)
                + io.param(KD) * (u[1] - velocity)
                + ki * integral
                + u[2];
            let mut vc = (r / k) * tau + k * velocity;
            let vmax = io.param(VMAX);
            if vmax > 0.0 {
                vc = clip(vc, -vmax, vmax);
            }
            v = vc + voltage;
        }
        // Current.
        let te = io.param(TE);
        let current = io.state(S_CURRENT);
        let mut current_dot = 0.0;
        let mut current_next = current;
        if te > 0.0 {
            current_dot = (v / r_t - (k / r_t) * velocity - current) / te;
            let didt = io.param(DIDT);
            if didt > 0.0 {
                current_dot = clip(current_dot, -didt, didt);
            }
            current_next = current + current_dot * te * -expm1(-h / te);
            io.set_state(S_CURRENT, current_next);
        }
        // Temperature.
        let mut temp_dot = 0.0;
        if r_th > 0.0 {
            let i_t = if te > 0.0 {
                current
            } else {
                (v - k * velocity) / r_t
            };
            temp_dot = (r_t * i_t * i_t - dtemp / r_th) / io.param(CTH);
            io.set_state(S_TEMP, dtemp + temp_dot * h);
        }
        // LuGre bristle.
        let sigma0 = io.param(S0);
        let z = io.state(S_BRISTLE);
        let mut z_dot = 0.0;
        if sigma0 > 0.0 {
            let (tau_c, tau_s) = (io.param(TAU_C), io.param(TAU_S));
            let ratio = velocity / io.param(OMEGA_S).max(1e-15);
            let g = tau_c + (tau_s - tau_c) * (-(ratio * ratio)).exp();
            let a = -sigma0 * velocity.abs() / g.max(1e-15);
            z_dot = a * z + velocity;
            let c = if a.abs() > 1e-15 { expm1(a * h) / a } else { h };
            io.set_state(S_BRISTLE, (a * h).exp() * z + c * velocity);
        }
        // Force: actearly current, or the stateless law (with back-EMF
        // under the dcmotor bias).
        let bias = io.data(1) as u32;
        let mut f = if te > 0.0 {
            k * current_next
        } else {
            let gain = k / r_t.max(1e-15);
            if bias == DcMotorBias::DcMotor as u32 {
                gain * v + (0.0 - gain * k * velocity)
            } else {
                gain * v
            }
        };
        if bias == DcMotorBias::Affine as u32 {
            f += io.data(2) + io.data(3) * length + io.data(4) * velocity;
        }
        f = io.saturate(RAW, f, io.param(F_LO), io.param(F_HI));
        if bias == DcMotorBias::DcMotor as u32 {
            let amplitude = io.param(COG_A);
            if amplitude != 0.0 {
                f += amplitude * (io.param(COG_N) * length + io.param(COG_P)).sin();
            }
            if sigma0 > 0.0 {
                f -= sigma0 * z + io.param(S1) * z_dot;
            }
        }
        io.set_output(0, f);
        io.set_output(1, slew_dot);
        io.set_output(2, int_dot);
        io.set_output(3, temp_dot);
        io.set_output(4, z_dot);
        io.set_output(5, current_dot);
        gear * f
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

/// A `<dcmotor>` element as written in MJCF (MuJoCo 4.0), for
/// [`DcMotorMjcf::compile`]: every attribute optional, lists as in the XML.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DcMotorMjcf {
    /// `motorconst="Kt [Ke]"` (N·m/A, V·s/rad).
    #[serde(default)]
    pub motorconst: Vec<f64>,
    /// `resistance` (Ω).
    #[serde(default)]
    pub resistance: f64,
    /// `nominal="V τ_stall ω_noload"`.
    #[serde(default)]
    pub nominal: Vec<f64>,
    /// `saturation="τ_max i_max (di/dt)_max"`.
    #[serde(default)]
    pub saturation: Vec<f64>,
    /// `inductance="L t_e"`.
    #[serde(default)]
    pub inductance: Vec<f64>,
    /// `cogging="A N_p φ"`.
    #[serde(default)]
    pub cogging: Vec<f64>,
    /// `controller="kp ki kd slewmax Imax Vmax"`.
    #[serde(default)]
    pub controller: Vec<f64>,
    /// `thermal="R_T C t_T α T_0 T_a"`.
    #[serde(default)]
    pub thermal: Vec<f64>,
    /// `lugre="σ0 σ1 τ_C τ_S ω_S"`.
    #[serde(default)]
    pub lugre: Vec<f64>,
    /// `input` (default `voltage`).
    #[serde(default)]
    pub input: Option<String>,
    /// `ctrlrange`, broadcast to every control.
    #[serde(default)]
    pub ctrlrange: Option<[f64; 2]>,
    /// `ctrllimited` (`true`, `false` or `auto`; default auto: limited when
    /// `ctrlrange` is given with lo < hi).
    #[serde(default, deserialize_with = "limited")]
    pub ctrllimited: Option<bool>,
    /// `gear` (its first entry).
    #[serde(default)]
    pub gear: Vec<f64>,
    /// `damping`: LuGre's viscous σ2, a passive force the simulator applies;
    /// read here for the no-load-speed motor constant.
    #[serde(default)]
    pub damping: f64,
    /// `armature` (the simulator's).
    #[serde(default)]
    pub armature: f64,
}

/// MJCF's `true`/`false`/`auto` (or a JSON boolean); `auto` is `None`.
fn limited<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Flag {
        Bool(bool),
        Text(String),
    }
    match <Flag as serde::Deserialize>::deserialize(d)? {
        Flag::Bool(b) => Ok(Some(b)),
        Flag::Text(t) => match t.as_str() {
            "true" => Ok(Some(true)),
            "false" => Ok(Some(false)),
            "auto" => Ok(None),
            other => Err(serde::de::Error::custom(format!(
                "`{other}`: give true, false or auto"
            ))),
        },
    }
}

impl DcMotorMjcf {
    /// MuJoCo 4.0's compile-time mapping (`mjs_setToDCMotor` and the 4.0
    /// rules, Part 5.9 of the reference), in f64: the motor constant from
    /// `motorconst` or the no-load speed (corrected for `damping`), the
    /// resistance from the stall torque, `t_e = L/R` (else the given one),
    /// the saturation torque and current rate, the thermal triple (C from
    /// `t_T/R_T` whenever both are given), LuGre, cogging and the controller.
    pub fn compile(&self, timestep: f32) -> Result<MjDcMotorCfg, Error> {
        let at = |v: &[f64], k: usize| v.get(k).copied().unwrap_or(0.0);
        let group = "dcmotor";
        let inputs = match &self.input {
            None => voltage_only(),
            Some(text) => CtrlInputs::parse(text).ok_or_else(|| {
                invalid(
                    group,
                    "input",
                    f32::NAN,
                    "give any of pos, vel, ff, voltage, or none",
                )
            })?,
        };
        let (kt, mut ke) = (at(&self.motorconst, 0), at(&self.motorconst, 1));
        if kt < 0.0 || ke < 0.0 {
            return Err(invalid(
                group,
                "motorconst",
                kt.min(ke) as f32,
                "motor constants must be >= 0",
            ));
        }
        let mut r = self.resistance;
        let (v_n, tau_0, omega_0) = (
            at(&self.nominal, 0),
            at(&self.nominal, 1),
            at(&self.nominal, 2),
        );
        let b = self.damping;
        if v_n > 0.0 && ke <= 0.0 && omega_0 > 0.0 {
            ke = if b > 0.0 && r > 0.0 {
                let disc = v_n * v_n - 4.0 * r * b * omega_0 * omega_0;
                if disc > 0.0 {
                    (v_n + disc.sqrt()) / (2.0 * omega_0)
                } else {
                    v_n / omega_0
                }
            } else if b > 0.0 && tau_0 > 0.0 {
                let k = v_n / omega_0 - v_n * b / tau_0;
                if k > 0.0 {
                    k
                } else {
                    v_n / omega_0
                }
            } else {
                v_n / omega_0
            };
        }
        let k = if kt > 0.0 && ke > 0.0 {
            (kt * ke).sqrt()
        } else if kt > 0.0 {
            kt
        } else {
            ke
        };
        if r == 0.0 && v_n > 0.0 && tau_0 > 0.0 && k > 0.0 {
            r = k * v_n / tau_0;
        }
        if k <= 0.0 && inputs.0 != CtrlInputs::NONE {
            return Err(invalid(
                group,
                "motorconst",
                k as f32,
                "a driven motor needs K > 0",
            ));
        }
        if r <= 0.0 {
            return Err(invalid(group, "resistance", r as f32, "must be > 0"));
        }
        let (inductance, te_given) = (at(&self.inductance, 0), at(&self.inductance, 1));
        if inductance < 0.0 || te_given < 0.0 {
            return Err(invalid(
                group,
                "inductance",
                inductance.min(te_given) as f32,
                "must be >= 0",
            ));
        }
        let mut m = MjDcMotorCfg::new(r as f32, k as f32, timestep);
        m.inputs = inputs;
        m.te = if inductance > 0.0 {
            inductance / r
        } else {
            te_given
        } as f32;
        let (sat_tau, sat_i, sat_didt) = (
            at(&self.saturation, 0),
            at(&self.saturation, 1),
            at(&self.saturation, 2),
        );
        let tau_max = if sat_tau != 0.0 { sat_tau } else { k * sat_i };
        if sat_tau > 0.0 || sat_i > 0.0 {
            m.force_range = [-tau_max as f32, tau_max as f32];
        }
        if sat_didt > 0.0 {
            m.didt_max = sat_didt as f32;
        }
        let (mut r_th, mut c_th, t_th) = (
            at(&self.thermal, 0),
            at(&self.thermal, 1),
            at(&self.thermal, 2),
        );
        if r_th > 0.0 || c_th > 0.0 || t_th > 0.0 {
            if t_th > 0.0 && r_th > 0.0 {
                c_th = t_th / r_th;
            } else if t_th > 0.0 && c_th > 0.0 && r_th == 0.0 {
                r_th = t_th / c_th;
            }
            if r_th <= 0.0 || c_th <= 0.0 {
                return Err(invalid(
                    group,
                    "thermal",
                    r_th.min(c_th) as f32,
                    "a thermal model needs R_T > 0 and C > 0",
                ));
            }
            m.thermal_resistance = r_th as f32;
            m.thermal_capacitance = c_th as f32;
            m.alpha = at(&self.thermal, 3) as f32;
            m.t0 = at(&self.thermal, 4) as f32;
            m.ambient = at(&self.thermal, 5) as f32;
        }
        if at(&self.lugre, 0) > 0.0 {
            m.sigma0 = at(&self.lugre, 0) as f32;
            m.sigma1 = at(&self.lugre, 1) as f32;
            m.tau_c = at(&self.lugre, 2) as f32;
            m.tau_s = at(&self.lugre, 3) as f32;
            m.omega_s = at(&self.lugre, 4) as f32;
        }
        m.cogging_amplitude = at(&self.cogging, 0) as f32;
        m.cogging_poles = at(&self.cogging, 1) as f32;
        m.cogging_phase = at(&self.cogging, 2) as f32;
        let c = &self.controller;
        (m.kp, m.ki, m.kd) = (at(c, 0) as f32, at(c, 1) as f32, at(c, 2) as f32);
        m.slewmax = at(c, 3) as f32;
        m.imax = at(c, 4) as f32;
        m.vmax = at(c, 5).max(0.0) as f32;
        // `input="none"` has no control to limit.
        if let (Some([lo, hi]), false) = (self.ctrlrange, inputs.0 == CtrlInputs::NONE) {
            if self.ctrllimited.unwrap_or(lo < hi) {
                m.ctrl_range = [lo as f32, hi as f32];
            }
        }
        m.gear = self.gear.first().copied().unwrap_or(1.0) as f32;
        Ok(m)
    }
}

/// A `<pid>` element as written in MJCF (MuJoCo 4.0), for
/// [`PidMjcf::compile`].
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PidMjcf {
    /// `kp` (default 1).
    #[serde(default)]
    pub kp: Option<f64>,
    /// `kv`.
    #[serde(default)]
    pub kv: Option<f64>,
    /// `dampratio` (instead of `kv`): of the reflected mass.
    #[serde(default)]
    pub dampratio: Option<f64>,
    /// `ki`.
    #[serde(default)]
    pub ki: f64,
    /// `imax` (kept only with `ki`).
    #[serde(default)]
    pub imax: f64,
    /// `slewmax`.
    #[serde(default)]
    pub slewmax: f64,
    /// `input` (default `pos vel`).
    #[serde(default)]
    pub input: Option<String>,
    /// `posrange`.
    #[serde(default)]
    pub posrange: Option<[f64; 2]>,
    /// `ctrlrange` (an alias of `posrange`).
    #[serde(default)]
    pub ctrlrange: Option<[f64; 2]>,
    /// `ctrllimited` (for the pos control; `true`, `false` or `auto`).
    #[serde(default, deserialize_with = "limited")]
    pub ctrllimited: Option<bool>,
    /// `inheritrange`: the pos range as `mid ± s·half` of the joint range.
    #[serde(default)]
    pub inheritrange: f64,
    /// `velrange` (limited iff lo < hi).
    #[serde(default)]
    pub velrange: Option<[f64; 2]>,
    /// `ffrange` (limited iff lo < hi).
    #[serde(default)]
    pub ffrange: Option<[f64; 2]>,
    /// `forcerange`.
    #[serde(default)]
    pub forcerange: Option<[f64; 2]>,
    /// `gear` (its first entry).
    #[serde(default)]
    pub gear: Vec<f64>,
    /// `armature`: part of the reflected mass the caller gives.
    #[serde(default)]
    pub armature: f64,
}

impl PidMjcf {
    /// MuJoCo 4.0's compile-time mapping (`mjs_setToPID`, Part 5.9):
    /// `reflected_mass` is `1/Σ (gear·coef)²/dof_M0` (for `dampratio`),
    /// `joint_range` the joint's range (for `inheritrange`).
    pub fn compile(
        &self,
        timestep: f32,
        reflected_mass: f64,
        joint_range: [f64; 2],
    ) -> Result<MjPidCfg, Error> {
        let group = "pid";
        let inputs = match &self.input {
            None => pos_vel(),
            Some(text) => CtrlInputs::parse(text)
                .ok_or_else(|| invalid(group, "input", f32::NAN, "give any of pos, vel and ff"))?,
        };
        let kp = self.kp.unwrap_or(1.0);
        let kv = match (self.kv, self.dampratio) {
            (Some(kv), _) => kv,
            (None, Some(ratio)) => ratio * 2.0 * (kp * reflected_mass).sqrt(),
            (None, None) => 0.0,
        };
        let mut pid = MjPidCfg::new(kp as f32, kv as f32, timestep);
        pid.inputs = inputs;
        pid.ki = self.ki as f32;
        pid.imax = if self.ki != 0.0 {
            self.imax as f32
        } else {
            0.0
        };
        pid.slewmax = self.slewmax as f32;
        pid.gear = self.gear.first().copied().unwrap_or(1.0) as f32;
        let f32s = |[lo, hi]: [f64; 2]| [lo as f32, hi as f32];
        if self.inheritrange > 0.0 {
            let (mid, half) = (
                0.5 * (joint_range[0] + joint_range[1]),
                0.5 * (joint_range[1] - joint_range[0]),
            );
            pid.pos_range = f32s([
                mid - self.inheritrange * half,
                mid + self.inheritrange * half,
            ]);
        } else if let Some([lo, hi]) = self.posrange.or(self.ctrlrange) {
            if self.ctrllimited.unwrap_or(lo < hi) {
                pid.pos_range = f32s([lo, hi]);
            }
        }
        for (range, out) in [
            (self.velrange, &mut pid.vel_range),
            (self.ffrange, &mut pid.ff_range),
        ] {
            if let Some([lo, hi]) = range {
                if lo < hi {
                    *out = f32s([lo, hi]);
                }
            }
        }
        if let Some([lo, hi]) = self.forcerange {
            if lo < hi {
                pid.force_range = f32s([lo, hi]);
            }
        }
        pid.validate(group)?;
        Ok(pid)
    }
}

/// mjlab's `BuiltinDcMotorActuatorCfg` motor parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DcMotorParams {
    /// `DcMotorDatasheetParams(V_n, τ_stall, ω_nl)`: MuJoCo's `nominal`.
    Datasheet {
        /// Nominal voltage (V).
        voltage: f64,
        /// Stall torque at that voltage (N·m).
        stall_torque: f64,
        /// No-load speed at that voltage (rad/s).
        no_load_speed: f64,
    },
    /// `DcMotorPhysicalParams(kt, ke, R)`: `motorconst` and `resistance`.
    Physical {
        /// Torque constant (N·m/A).
        kt: f64,
        /// Back-EMF constant (V·s/rad).
        ke: f64,
        /// Winding resistance (Ω).
        resistance: f64,
    },
}

/// What an mjlab DC motor's command drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DcMotorMode {
    /// The position target (`stiffness`, `damping`, `integral_gain` act).
    Position,
    /// The velocity target (`damping` acts on it).
    Velocity,
    /// A raw voltage: the `voltage` input plane (mjlab's effort target).
    Voltage,
}

/// mjlab's `BuiltinDcMotorActuatorCfg` (mjlab-isaaclab reference §1.8):
/// a native `<dcmotor>` whose PID gains are joint-space, so that at rest
/// `qfrc = stiffness·(q* − q)` (mjlab's test numbers). mjlab writes
/// `stiffness·R/K` into the controller because the controller it targets
/// (mujoco_warp's) works in voltage space; MuJoCo 4.0.0's works in torque
/// space, so [`MjlabDcMotor::to_mjcf`] writes the gains themselves. Either
/// way the motor delivers the same joint torque.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MjlabDcMotor {
    /// `motor_params`.
    pub motor: DcMotorParams,
    /// `mode` (default position).
    pub mode: DcMotorMode,
    /// `stiffness` (N·m/rad, joint-space).
    pub stiffness: f64,
    /// `damping` (N·m·s/rad, joint-space).
    pub damping: f64,
    /// `voltage_limit` (V; 0 for none).
    pub voltage_limit: f64,
    /// `integral_gain` (N·m/(rad·s)).
    pub integral_gain: f64,
    /// `integral_limit` (rad·s; 0 for none).
    pub integral_limit: f64,
    /// `slew_rate` (per s; 0 for none).
    pub slew_rate: f64,
    /// `effort_limit`: the saturation torque (N·m), when given.
    pub effort_limit: Option<f64>,
    /// `gear`.
    pub gear: f64,
    /// `inductance` (H).
    pub inductance: f64,
    /// `electrical_time_constant` (s), used when `inductance` is 0.
    pub electrical_time_constant: f64,
    /// `thermal`: MuJoCo's `thermal="R_T C t_T α T_0 T_a"`.
    pub thermal: Option<[f64; 6]>,
    /// `cogging`: `A N_p φ`.
    pub cogging: Option<[f64; 3]>,
    /// `lugre`: `σ0 σ1 τ_C τ_S ω_S`.
    pub lugre: Option<[f64; 5]>,
}

impl MjlabDcMotor {
    /// mjlab's defaults around `motor`: position mode, no gains, no limits.
    pub fn new(motor: DcMotorParams) -> Self {
        MjlabDcMotor {
            motor,
            mode: DcMotorMode::Position,
            stiffness: 0.0,
            damping: 0.0,
            voltage_limit: 0.0,
            integral_gain: 0.0,
            integral_limit: 0.0,
            slew_rate: 0.0,
            effort_limit: None,
            gear: 1.0,
            inductance: 0.0,
            electrical_time_constant: 0.0,
            thermal: None,
            cogging: None,
            lugre: None,
        }
    }

    /// The `<dcmotor>` element mjlab writes (`set_to_dcmotor`).
    pub fn to_mjcf(&self) -> Result<DcMotorMjcf, Error> {
        let group = "BuiltinDcMotor";
        let (motorconst, resistance, nominal) = match self.motor {
            DcMotorParams::Datasheet {
                voltage,
                stall_torque,
                no_load_speed,
            } => (Vec::new(), 0.0, vec![voltage, stall_torque, no_load_speed]),
            DcMotorParams::Physical { kt, ke, resistance } => {
                (vec![kt, ke], resistance, Vec::new())
            }
        };
        let input = match self.mode {
            DcMotorMode::Position => "pos",
            DcMotorMode::Velocity => "vel",
            DcMotorMode::Voltage => {
                if self.stiffness != 0.0 || self.damping != 0.0 || self.integral_gain != 0.0 {
                    return Err(invalid(
                        group,
                        "stiffness",
                        self.stiffness as f32,
                        "voltage mode has no controller: leave the gains at 0",
                    ));
                }
                "voltage"
            }
        };
        Ok(DcMotorMjcf {
            motorconst,
            resistance,
            nominal,
            saturation: self.effort_limit.map(|t| vec![t]).unwrap_or_default(),
            inductance: vec![self.inductance, self.electrical_time_constant],
            cogging: self.cogging.map(Vec::from).unwrap_or_default(),
            controller: vec![
                self.stiffness,
                self.integral_gain,
                self.damping,
                self.slew_rate,
                self.integral_limit,
                self.voltage_limit,
            ],
            thermal: self.thermal.map(Vec::from).unwrap_or_default(),
            lugre: self.lugre.map(Vec::from).unwrap_or_default(),
            input: Some(input.to_owned()),
            gear: vec![self.gear],
            ..DcMotorMjcf::default()
        })
    }

    /// The compiled kind at MuJoCo's `timestep`.
    pub fn compile(&self, timestep: f32) -> Result<MjDcMotorCfg, Error> {
        self.to_mjcf()?.compile(timestep)
    }
}
