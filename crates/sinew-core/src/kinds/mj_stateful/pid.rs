//! MuJoCo 4's `<pid>` (Part 5.4 of the reference).

use super::*;

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
    const WGSL: &'static str = include_str!("../../../../../shaders/mj_stateful.wgsl");

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
        let bits = io.data_at::<0>() as u32;
        let gear = io.param(GEAR);
        let (length, velocity) = (gear * io.pos(), gear * io.vel());
        // Every branch a select, so the loop stays in vector lanes.
        let control = |io: &I, bit: u32, field: CommandField, lo: usize, hi: usize| {
            let value = clip(io.target(field), io.param(lo), io.param(hi));
            if bits & bit != 0 {
                value
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
        let (ki, imax, early) = (io.param(KI), io.param(IMAX), io.param(EARLY));
        let integral = io.state(S_INT);
        let error = u[0] - length;
        let (int_dot, next) = integrate(io, ki > 0.0, error, imax, h, [act_lo, act_hi]);
        // Off, `next` is the integral itself.
        let integral = if early != 0.0 { next } else { integral };
        let (kp, kv) = (io.param(KP), io.param(KV));
        let f = kp * u[0] + kv * u[1] + u[2];
        let mut f = if ki > 0.0 { f + ki * integral } else { f };
        f += io.param(B0) + (-kp) * length + (-kv) * velocity;
        let f = io.saturate(RAW, f, io.param(F_LO), io.param(F_HI));
        io.set_output(0, f);
        io.set_output(1, slew_dot);
        io.set_output(2, int_dot);
        gear * f
    }
}
