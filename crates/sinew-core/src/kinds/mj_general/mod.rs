//! MuJoCo's own actuator force law (`mj_fwdActuation`): gain × input + bias
//! with activation dynamics, the shortcut elements (`<motor>`, `<position>`,
//! …) as constructors, and the compiled per-actuator record both backends
//! read ([`MjActuator`], the twin of the WGSL struct in `shaders/mujoco.wgsl`).
//!
//! The math follows `reference/actuator-math.md` Part 1; every comparison
//! (`<` against `<=`) and every `max(MINVAL, ·)` guard is kept as MuJoCo
//! writes it. Arithmetic is f32. The one quantity precomputed in f64 is the
//! activation step `h` or `τ·(1 − e^{−h/τ})`, which loses digits in f32 when
//! `h ≪ τ`.

use bytemuck::{Pod, Zeroable};

use super::spec::{aliased, Domain, Kind, LawIo, ParamSpec, Stage, StateSpec};
use super::{clip, invalid, CommandField, CtrlMeaning};
use crate::error::Error;
use crate::robot::{BiasType, DynType, GainType};

mod law;
mod shortcuts;

pub use law::*;
pub use shortcuts::*;

/// MuJoCo's `mjMINVAL`, the floor of every divisor.
pub const MJ_MINVAL: f32 = 1e-15;
/// MuJoCo's default `opt.timestep` (s).
pub const MJ_DEFAULT_TIMESTEP: f32 = 0.002;
/// A control beyond this magnitude makes MuJoCo zero every control of the
/// model (its "bad control" guard); Sinew does so per env.
pub const MJ_MAX_CTRL: f32 = 1e10;

/// [`MjActuator::flags`] bit: the control is clamped to `ctrl_range`.
pub const MJ_CTRL_LIMITED: u32 = 1;
/// [`MjActuator::flags`] bit: the force is clamped to `force_range`.
pub const MJ_FORCE_LIMITED: u32 = 2;
/// [`MjActuator::flags`] bit: the next activation is clamped to `act_range`.
pub const MJ_ACT_LIMITED: u32 = 4;
/// [`MjActuator::flags`] bit: the force uses the next activation (`actearly`).
pub const MJ_ACT_EARLY: u32 = 8;
/// [`MjActuator::flags`] bit: the actuator's parameters (`gainprm`,
/// `biasprm`, `dynprm`, gear, ranges) come from the per-env parameter table
/// (an [`MjGeneralCfg`] group's parameters), not from the compiled actuator.
pub const MJ_TABLE_PARAMS: u32 = 16;

/// An entry of `gainprm`, `biasprm` or `dynprm`, randomizable per env.
const fn prm_spec(
    name: &'static str,
    alias: &'static [&'static str],
    doc: &'static str,
) -> ParamSpec {
    aliased(name, alias, "(by gain/bias type)", doc, Domain::Finite)
}

/// A range end, randomizable per env (±inf where unlimited).
const fn range_spec(
    name: &'static str,
    alias: &'static [&'static str],
    doc: &'static str,
) -> ParamSpec {
    aliased(name, alias, "(actuator units)", doc, Domain::Extended)
}

/// Slot of `gainprm[0]` among [`MjGeneralCfg`]'s parameters (`gainprm[k]` at `+k`).
pub const MJ_SLOT_GAIN: usize = 0;
/// Slot of `biasprm[0]`.
pub const MJ_SLOT_BIAS: usize = 9;
/// Slot of `dynprm[0]`.
pub const MJ_SLOT_DYN: usize = 18;
/// Slot of the gear.
pub const MJ_SLOT_GEAR: usize = 21;
/// Slot of `ctrlrange[0]`; then `ctrlrange[1]`, `forcerange[0..2]`, `actrange[0..2]`.
pub const MJ_SLOT_RANGES: usize = 22;
/// [`MjGeneralCfg`]'s parameter slots.
pub const MJ_GENERAL_SLOTS: usize = 28;

/// [`MjGeneralCfg`]'s per-env parameters: `gainprm[0..9]`, `biasprm[0..9]`,
/// `dynprm[0..3]`, the gear and the control, force and activation ranges
/// (±inf where MuJoCo's model leaves them unlimited).
const MJ_GENERAL_PARAMS: &[ParamSpec] = &[
    prm_spec(
        "gainprm0",
        &["gainprm[0]"],
        "gainprm[0]: the fixed or affine gain's constant term (a muscle's range[0])",
    ),
    prm_spec(
        "gainprm1",
        &["gainprm[1]"],
        "gainprm[1]: the affine gain's length term (a muscle's range[1])",
    ),
    prm_spec(
        "gainprm2",
        &["gainprm[2]"],
        "gainprm[2]: the affine gain's velocity term (a muscle's force)",
    ),
    prm_spec(
        "gainprm3",
        &["gainprm[3]"],
        "gainprm[3]: (a muscle's scale)",
    ),
    prm_spec("gainprm4", &["gainprm[4]"], "gainprm[4]: (a muscle's lmin)"),
    prm_spec("gainprm5", &["gainprm[5]"], "gainprm[5]: (a muscle's lmax)"),
    prm_spec("gainprm6", &["gainprm[6]"], "gainprm[6]: (a muscle's vmax)"),
    prm_spec(
        "gainprm7",
        &["gainprm[7]"],
        "gainprm[7]: (a muscle's fpmax)",
    ),
    prm_spec(
        "gainprm8",
        &["gainprm[8]"],
        "gainprm[8]: (a muscle's fvmax)",
    ),
    prm_spec(
        "biasprm0",
        &["biasprm[0]"],
        "biasprm[0]: the affine bias's constant term",
    ),
    prm_spec(
        "biasprm1",
        &["biasprm[1]"],
        "biasprm[1]: the affine bias's length term (−kp of a position servo)",
    ),
    prm_spec(
        "biasprm2",
        &["biasprm[2]"],
        "biasprm[2]: the affine bias's velocity term (−kv)",
    ),
    prm_spec(
        "biasprm3",
        &["biasprm[3]"],
        "biasprm[3]: (a muscle's, as gainprm)",
    ),
    prm_spec(
        "biasprm4",
        &["biasprm[4]"],
        "biasprm[4]: (a muscle's, as gainprm)",
    ),
    prm_spec(
        "biasprm5",
        &["biasprm[5]"],
        "biasprm[5]: (a muscle's, as gainprm)",
    ),
    prm_spec(
        "biasprm6",
        &["biasprm[6]"],
        "biasprm[6]: (a muscle's, as gainprm)",
    ),
    prm_spec(
        "biasprm7",
        &["biasprm[7]"],
        "biasprm[7]: (a muscle's, as gainprm)",
    ),
    prm_spec(
        "biasprm8",
        &["biasprm[8]"],
        "biasprm[8]: (a muscle's, as gainprm)",
    ),
    prm_spec(
        "dynprm0",
        &["dynprm[0]"],
        "dynprm[0]: the filter's time constant (a muscle's τ_act)",
    ),
    prm_spec("dynprm1", &["dynprm[1]"], "dynprm[1]: (a muscle's τ_deact)"),
    prm_spec(
        "dynprm2",
        &["dynprm[2]"],
        "dynprm[2]: (a muscle's tausmooth)",
    ),
    aliased(
        "gear",
        &["gear[0]"],
        "1",
        "gear[0]: actuator length = gear · (joint position or tendon length)",
        Domain::Finite,
    ),
    range_spec(
        "ctrl_lo",
        &["ctrlrange[0]"],
        "ctrlrange[0] (-inf: unlimited)",
    ),
    range_spec(
        "ctrl_hi",
        &["ctrlrange[1]"],
        "ctrlrange[1] (inf: unlimited)",
    ),
    range_spec(
        "force_lo",
        &["forcerange[0]"],
        "forcerange[0] (-inf: unlimited)",
    ),
    range_spec(
        "force_hi",
        &["forcerange[1]"],
        "forcerange[1] (inf: unlimited)",
    ),
    range_spec("act_lo", &["actrange[0]"], "actrange[0] (-inf: unlimited)"),
    range_spec("act_hi", &["actrange[1]"], "actrange[1] (inf: unlimited)"),
];

/// One MuJoCo `<general>` actuator: what `mjModel` stores for it.
///
/// Build it from the shortcut constructors ([`MjGeneralCfg::motor`],
/// [`MjPositionCfg`], [`MjMuscleCfg`], …) or copy the compiled fields of a
/// model (`actuator_gainprm`, … as in the MuJoCo golden files). The control
/// MuJoCo calls `ctrl` is the command field `command_field`, delayed when the
/// group has a delay. The ctrl column receives `actuator_force`; the joint
/// efforts (`qfrc_actuator`) come from [`Backend::read_joint_effort`](crate::Backend::read_joint_effort).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MjGeneralCfg {
    /// Which command target is MuJoCo's `ctrl`. Default: effort.
    pub command_field: CommandField,
    /// Activation dynamics. Default none.
    pub dyn_type: DynType,
    /// `dynprm`: filter τ in `[0]`; muscle τ_act, τ_deact, tausmooth in `[0..3]`.
    pub dynprm: [f32; 10],
    /// Gain type. Default fixed.
    pub gain_type: GainType,
    /// `gainprm`: fixed `[0]`; affine `[0..3]`; muscle `[0..9]`.
    pub gainprm: [f32; 10],
    /// Bias type. Default none.
    pub bias_type: BiasType,
    /// `biasprm`: affine `[0..3]`; muscle `[0..9]`.
    pub biasprm: [f32; 10],
    /// `ctrlrange` when `ctrllimited`.
    pub ctrl_range: Option<[f32; 2]>,
    /// `forcerange` when `forcelimited`.
    pub force_range: Option<[f32; 2]>,
    /// `actrange` when `actlimited` (stateful dynamics only).
    pub act_range: Option<[f32; 2]>,
    /// `actearly`: the force uses the next activation. Default false.
    pub act_early: bool,
    /// `gear[0]`: length = gear · (joint position or tendon length). Default 1.
    pub gear: f32,
    /// `lengthrange`, a compiler output that muscles need (MuJoCo finds it
    /// by simulation; copy it from the compiled model).
    pub length_range: [f32; 2],
    /// `acc0`, a compiler output: a muscle with `force < 0` has peak force
    /// `scale / acc0`.
    pub acc0: f32,
}

impl Default for MjGeneralCfg {
    /// MuJoCo's `<general/>`: fixed gain 1, no bias, no dynamics, gear 1.
    fn default() -> Self {
        let mut unit = [0.0; 10];
        unit[0] = 1.0;
        MjGeneralCfg {
            command_field: CommandField::Effort,
            dyn_type: DynType::None,
            dynprm: unit,
            gain_type: GainType::Fixed,
            gainprm: unit,
            bias_type: BiasType::None,
            biasprm: [0.0; 10],
            ctrl_range: None,
            force_range: None,
            act_range: None,
            act_early: false,
            gear: 1.0,
            length_range: [0.0, 0.0],
            acc0: 0.0,
        }
    }
}

fn prm(values: &[f32]) -> [f32; 10] {
    let mut out = [0.0; 10];
    out[..values.len()].copy_from_slice(values);
    out
}

/// The muscle parameters of MuJoCo's `<muscle>` in `gainprm` order, with
/// MuJoCo's defaults.
pub const MJ_MUSCLE_DEFAULTS: [f32; 9] = [0.75, 1.05, -1.0, 200.0, 0.5, 1.6, 1.5, 1.3, 1.2];

impl Kind for MjGeneralCfg {
    const NAME: &'static str = "MjGeneral";
    const KEY: &'static str = "mj_general";
    const PARAMS: &'static [ParamSpec] = MJ_GENERAL_PARAMS;
    const STATE: &'static [StateSpec] = &[];
    const READS: &'static [CommandField] = &CommandField::ALL;
    const WGSL: &'static str = include_str!("../../../../../shaders/mujoco.wgsl");
    const STAGE: Stage = Stage::MuJoCo;
    const SITES: bool = true;

    fn param_value(&self, k: usize) -> f32 {
        let lo = |r: Option<[f32; 2]>| r.map_or(f32::NEG_INFINITY, |r| r[0]);
        let hi = |r: Option<[f32; 2]>| r.map_or(f32::INFINITY, |r| r[1]);
        match k {
            MJ_SLOT_GAIN..MJ_SLOT_BIAS => self.gainprm[k - MJ_SLOT_GAIN],
            MJ_SLOT_BIAS..MJ_SLOT_DYN => self.biasprm[k - MJ_SLOT_BIAS],
            MJ_SLOT_DYN..MJ_SLOT_GEAR => self.dynprm[k - MJ_SLOT_DYN],
            MJ_SLOT_GEAR => self.gear,
            _ => [
                lo(self.ctrl_range),
                hi(self.ctrl_range),
                lo(self.force_range),
                hi(self.force_range),
                lo(self.act_range),
                hi(self.act_range),
            ][k - MJ_SLOT_RANGES],
        }
    }

    fn example() -> Self {
        // A filtered position servo with its activation clamped and its
        // force limited.
        MjGeneralCfg {
            act_range: Some([-0.8, 0.8]),
            force_range: Some([-20.0, 20.0]),
            ..MjPositionCfg {
                kp: 30.0,
                kv: Some(1.0),
                timeconst: 0.05,
                ..MjPositionCfg::default()
            }
            .position()
            .expect("a valid position shortcut")
        }
    }

    fn validate(&self, group: &str) -> Result<(), Error> {
        MjGeneralCfg::validate(self, group)
    }

    fn command_field(&self) -> Option<CommandField> {
        Some(self.command_field)
    }

    fn meaning(&self, _field: CommandField) -> CtrlMeaning {
        CtrlMeaning::ActuatorForce
    }

    fn ranges(&self) -> (Option<[f32; 2]>, Option<[f32; 2]>) {
        (self.ctrl_range, self.force_range)
    }

    /// Forwards MuJoCo's `ctrl`; the plan's MuJoCo stage computes the force.
    #[inline(always)]
    fn law<I: LawIo>(io: &mut I) -> f32 {
        io.field_target()
    }
}

impl MjGeneralCfg {
    /// `<motor>`: `force = ctrl` (gain 1, no bias), on the effort target.
    pub fn motor() -> Self {
        MjGeneralCfg::default()
    }

    /// `<velocity kv>`: `force = kv·(ctrl − V)`, on the velocity target.
    pub fn velocity(kv: f32) -> Self {
        MjGeneralCfg {
            command_field: CommandField::Velocity,
            gainprm: prm(&[kv]),
            bias_type: BiasType::Affine,
            biasprm: prm(&[0.0, 0.0, -kv]),
            ..MjGeneralCfg::default()
        }
    }

    /// `<damper kv ctrlrange>`: `force = −kv·V·ctrl`, `ctrl ≥ 0` (the range
    /// is required and always limited, as in MuJoCo).
    pub fn damper(kv: f32, ctrl_range: [f32; 2]) -> Self {
        MjGeneralCfg {
            gain_type: GainType::Affine,
            gainprm: prm(&[0.0, 0.0, -kv]),
            ctrl_range: Some(ctrl_range),
            ..MjGeneralCfg::default()
        }
    }

    /// `<cylinder timeconst area bias>`: a first-order filter on the
    /// pressure command, `force = area·act + bias·(1, L, V)`. MuJoCo's
    /// defaults are `timeconst = 1`, `area = 1`, `bias = 0`; for a
    /// `diameter` pass `π/4·d²` as the area ([`MjGeneralCfg::cylinder_area`]).
    pub fn cylinder(timeconst: f32, area: f32, bias: [f32; 3]) -> Self {
        MjGeneralCfg {
            dyn_type: DynType::Filter,
            dynprm: prm(&[timeconst]),
            gainprm: prm(&[area]),
            bias_type: BiasType::Affine,
            biasprm: prm(&bias),
            ..MjGeneralCfg::default()
        }
    }

    /// The area of a cylinder of this diameter, as MuJoCo computes it (f64).
    pub fn cylinder_area(diameter: f32) -> f32 {
        (std::f64::consts::PI / 4.0 * f64::from(diameter) * f64::from(diameter)) as f32
    }

    /// `<adhesion gain ctrlrange>`: `force = gain·ctrl`, `ctrl ≥ 0`. MuJoCo
    /// applies it through a body transmission; in Sinew that is a site group
    /// (length and velocity 0, no joint effort).
    pub fn adhesion(gain: f32, ctrl_range: [f32; 2]) -> Self {
        MjGeneralCfg {
            gainprm: prm(&[gain]),
            ctrl_range: Some(ctrl_range),
            ..MjGeneralCfg::default()
        }
    }

    /// The same actuator with this gear.
    pub fn with_gear(self, gear: f32) -> Self {
        MjGeneralCfg { gear, ..self }
    }

    /// The same actuator with its control clamped to `range`.
    pub fn with_ctrl_range(self, range: [f32; 2]) -> Self {
        MjGeneralCfg {
            ctrl_range: Some(range),
            ..self
        }
    }

    /// The same actuator with its force clamped to `range`.
    pub fn with_force_range(self, range: [f32; 2]) -> Self {
        MjGeneralCfg {
            force_range: Some(range),
            ..self
        }
    }

    /// The same actuator with its activation clamped to `range`.
    pub fn with_act_range(self, range: [f32; 2]) -> Self {
        MjGeneralCfg {
            act_range: Some(range),
            ..self
        }
    }

    /// The same actuator reading another command field as its control.
    pub fn with_command_field(self, command_field: CommandField) -> Self {
        MjGeneralCfg {
            command_field,
            ..self
        }
    }

    /// True when the actuator keeps an activation (`actnum == 1`).
    pub fn stateful(&self) -> bool {
        self.dyn_type != DynType::None
    }

    /// True when the gain or the bias is MuJoCo's muscle curve.
    pub fn uses_muscle_curves(&self) -> bool {
        self.gain_type == GainType::Muscle || self.bias_type == BiasType::Muscle
    }

    /// Checks every field against what MuJoCo's compiler accepts and what the
    /// law needs; errors name `group` and the field.
    pub fn validate(&self, group: &str) -> Result<(), Error> {
        let unsupported = |field: &str, name: &str| Error::InvalidParam {
            group: group.to_owned(),
            field: field.to_owned(),
            value: name.to_owned(),
            reason: "user-defined dynamics, gain and bias (callbacks) are not supported",
        };
        if self.dyn_type == DynType::User {
            return Err(unsupported("dyn_type", "User"));
        }
        if self.gain_type == GainType::User {
            return Err(unsupported("gain_type", "User"));
        }
        if self.bias_type == BiasType::User {
            return Err(unsupported("bias_type", "User"));
        }
        if self.bias_type == BiasType::DcMotor && self.dynprm[5] > 0.0 {
            return Err(invalid(
                group,
                "dynprm[5]",
                self.dynprm[5],
                "LuGre friction needs the bristle state of MuJoCo's dcmotor dynamics (use MjDcMotor)",
            ));
        }
        let arrays = [
            ("dynprm", &self.dynprm),
            ("gainprm", &self.gainprm),
            ("biasprm", &self.biasprm),
        ];
        for (name, values) in arrays {
            if let Some((i, &v)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                return Err(invalid(group, &format!("{name}[{i}]"), v, "must be finite"));
            }
        }
        if !self.gear.is_finite() {
            return Err(invalid(group, "gear", self.gear, "must be finite"));
        }
        let ranges = [
            ("ctrl_range", self.ctrl_range),
            ("force_range", self.force_range),
            ("act_range", self.act_range),
        ];
        for (name, range) in ranges {
            if let Some([lo, hi]) = range {
                if !(lo.is_finite() && hi.is_finite() && lo < hi) {
                    let reason = "a limited range needs finite bounds with lo < hi";
                    let bad = if lo.is_finite() { hi } else { lo };
                    return Err(invalid(group, name, bad, reason));
                }
            }
        }
        if self.act_range.is_some() && !self.stateful() {
            return Err(invalid(
                group,
                "act_range",
                self.act_range.map_or(0.0, |r| r[0]),
                "an activation range needs activation dynamics (dyn_type is None)",
            ));
        }
        if self.uses_muscle_curves() {
            let [lo, hi] = self.length_range;
            if !(lo.is_finite() && hi.is_finite() && lo < hi) {
                return Err(invalid(
                    group,
                    "length_range",
                    if lo.is_finite() { hi } else { lo },
                    "a muscle needs its compiled lengthrange (lo < hi); MuJoCo finds it by \
                     simulation when the model compiles, copy it from there",
                ));
            }
        }
        if !(self.acc0.is_finite() && self.acc0 >= 0.0) {
            return Err(invalid(group, "acc0", self.acc0, "must be finite and >= 0"));
        }
        Ok(())
    }

    /// The record the backends evaluate, for a step of `timestep` seconds.
    /// `ctrl_column` and the transmission path are filled in by the plan.
    pub fn compile(&self, timestep: f32) -> MjActuator {
        let mut flags = 0;
        let (ctrl_lo, ctrl_hi) = range_or_zero(self.ctrl_range, &mut flags, MJ_CTRL_LIMITED);
        let (force_lo, force_hi) = range_or_zero(self.force_range, &mut flags, MJ_FORCE_LIMITED);
        let (act_lo, act_hi) = range_or_zero(self.act_range, &mut flags, MJ_ACT_LIMITED);
        if self.act_early {
            flags |= MJ_ACT_EARLY;
        }
        let act_step = match self.dyn_type {
            DynType::FilterExact => filter_exact_step(self.dynprm[0], timestep),
            _ => timestep,
        };
        let nine = |p: &[f32; 10]| {
            let mut out = [0.0; 9];
            out.copy_from_slice(&p[..9]);
            out
        };
        MjActuator {
            ctrl_column: 0,
            path_offset: 0,
            path_len: 0,
            dyn_type: self.dyn_type as u32,
            gain_type: self.gain_type as u32,
            bias_type: self.bias_type as u32,
            flags,
            gear: self.gear,
            act_step,
            ctrl_lo,
            ctrl_hi,
            force_lo,
            force_hi,
            act_lo,
            act_hi,
            length_lo: self.length_range[0],
            length_hi: self.length_range[1],
            acc0: self.acc0,
            dynprm: [self.dynprm[0], self.dynprm[1], self.dynprm[2]],
            gainprm: nine(&self.gainprm),
            biasprm: nine(&self.biasprm),
            timestep,
        }
    }
}

/// What multiplies `act_dot` in `filterexact`'s next activation:
/// `τ·(1 − e^{−h/τ})`, computed in f64 (with our `expm1`, which rounds to
/// the same `f32` as the C library's; inlined, so a loop over it stays in
/// vector lanes).
#[inline(always)]
pub(crate) fn filter_exact_step(tau: f32, timestep: f32) -> f32 {
    let (tau, h) = (
        f64::from(tau).max(f64::from(MJ_MINVAL)),
        f64::from(timestep),
    );
    (tau * -crate::math::expm1_f64(-h / tau)) as f32
}

fn range_or_zero(range: Option<[f32; 2]>, flags: &mut u32, bit: u32) -> (f32, f32) {
    match range {
        Some([lo, hi]) => {
            *flags |= bit;
            (lo, hi)
        }
        None => (0.0, 0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Our f64 `expm1` gives `filterexact`'s step in the same bits as the
    /// C library's `expm1`, over time constants from 1e-7 s to 1e4 s
    /// (every 401st `f32`) and common timesteps.
    #[test]
    fn filter_exact_step_rounds_like_the_c_library() {
        let with_libm = |tau: f32, h: f32| {
            let tau = f64::from(tau).max(f64::from(MJ_MINVAL));
            (tau * -(-f64::from(h) / tau).exp_m1()) as f32
        };
        let (lo, hi) = (1e-7f32.to_bits(), 1e4f32.to_bits());
        let mut n = 0;
        for h in [0.0005f32, 0.001, 0.002, 0.005, 1.0 / 60.0, 0.02, 0.1] {
            for tau in (lo..=hi).step_by(401).map(f32::from_bits) {
                assert_eq!(
                    filter_exact_step(tau, h),
                    with_libm(tau, h),
                    "τ {tau:e}, h {h}"
                );
                n += 1;
            }
        }
        assert!(n > 4_000_000, "{n}");
        for tau in [0.0f32, 1e-30, f32::MAX] {
            assert_eq!(
                filter_exact_step(tau, 0.002),
                with_libm(tau, 0.002),
                "τ {tau:e}"
            );
        }
    }

    #[test]
    fn position_shortcut_maps_like_mujoco() {
        let cfg = MjPositionCfg {
            kp: 30.0,
            dampratio: Some(DampRatio {
                ratio: 1.0,
                reflected_inertia: 0.5,
            }),
            inheritrange: Some(InheritRange {
                scale: 0.8,
                target_range: [0.0, 2.0],
            }),
            ..MjPositionCfg::default()
        }
        .position()
        .unwrap();
        assert_eq!(cfg.biasprm[1], -30.0);
        assert_eq!(cfg.biasprm[2], -(2.0 * (15.0f64).sqrt()) as f32);
        // MuJoCo: [0.19999999999999996, 1.8] from the f64 scale 0.8; the
        // f32 scale 0.8 is 1.2e-8 larger.
        let [lo, hi] = cfg.ctrl_range.unwrap();
        assert!((lo - 0.2).abs() < 1e-7 && hi == 1.8, "{lo} {hi}");
        let both = MjPositionCfg {
            kv: Some(1.0),
            dampratio: Some(DampRatio {
                ratio: 1.0,
                reflected_inertia: 1.0,
            }),
            ..MjPositionCfg::default()
        };
        assert!(matches!(
            both.position(),
            Err(Error::InvalidShortcut { field: "kv", .. })
        ));
    }

    #[test]
    fn muscle_curves_hit_their_regions() {
        // FL: 0 outside [lmin, lmax], 1 at the optimum, ½ at the knots.
        assert_eq!(mj_muscle_gain_length(0.4, 0.5, 1.6), 0.0);
        assert_eq!(mj_muscle_gain_length(1.0, 0.5, 1.6), 1.0);
        assert_eq!(mj_muscle_gain_length(0.75, 0.5, 1.6), 0.5);
        assert_eq!(mj_sigmoid(0.5), 0.5);
        // Deactivation uses τ_deact/(0.5 + 1.5·a) with the clamped act.
        let rate = mj_muscle_dynamics(0.0, 1.0, &[0.01, 0.04, 0.0]);
        assert_eq!(rate, -1.0 / (0.04 / 2.0));
    }
}
