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

use super::spec::{Domain, Kind, LawIo, ParamSpec, Stage, StateSpec};
use super::{clip, invalid, CommandField, CtrlMeaning};
use crate::error::Error;
use crate::robot::{BiasType, DynType, GainType};

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

/// A parameter with MuJoCo's array name as its alias.
const fn aliased(
    name: &'static str,
    aliases: &'static [&'static str],
    unit: &'static str,
    doc: &'static str,
    domain: Domain,
) -> ParamSpec {
    ParamSpec {
        name,
        aliases,
        unit,
        doc,
        domain,
    }
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
    const WGSL: &'static str = include_str!("../../../../shaders/mujoco.wgsl");
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
        io.target(io.field())
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
/// `τ·(1 − e^{−h/τ})`, computed in f64.
fn filter_exact_step(tau: f32, timestep: f32) -> f32 {
    let (tau, h) = (
        f64::from(tau).max(f64::from(MJ_MINVAL)),
        f64::from(timestep),
    );
    (tau * -(-h / tau).exp_m1()) as f32
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

/// `dampratio` of a `<position>` or `<intvelocity>`: `kv = ratio·2·√(kp·m)`
/// with `m` the reflected inertia at the actuator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DampRatio {
    /// The damping ratio (1 = critical).
    pub ratio: f32,
    /// The reflected inertia `m = (J M⁻¹ Jᵀ)⁻¹` at `qpos0` (MuJoCo ≥ 3.15):
    /// `M0 / gear²` for one hinge, `1 / Σ (gear·coef_k)² / M0_k` for a fixed
    /// tendon over joints with diagonal inertia `M0_k` (armature included).
    pub reflected_inertia: f32,
}

/// `inheritrange`: the control (position) or activation (intvelocity)
/// range is the target's range scaled by `scale` about its middle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InheritRange {
    /// The scale, > 0.
    pub scale: f32,
    /// The range of the joint or tendon the actuator drives.
    pub target_range: [f32; 2],
}

/// MuJoCo's `<position>` and `<intvelocity>` attributes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MjPositionCfg {
    /// `kp` (≥ 0). Default 1.
    pub kp: f32,
    /// `kv` (≥ 0); exclusive with `dampratio`. Default 0.
    pub kv: Option<f32>,
    /// `dampratio` (≥ 0); exclusive with `kv`.
    pub dampratio: Option<DampRatio>,
    /// `timeconst` (≥ 0; position only): > 0 adds an exact first-order
    /// filter on the control. Default 0.
    pub timeconst: f32,
    /// `inheritrange`; exclusive with an explicit `ctrl_range` (position)
    /// or `act_range` (intvelocity).
    pub inheritrange: Option<InheritRange>,
    /// `ctrlrange`.
    pub ctrl_range: Option<[f32; 2]>,
    /// `forcerange`.
    pub force_range: Option<[f32; 2]>,
    /// `actrange` (intvelocity only).
    pub act_range: Option<[f32; 2]>,
    /// `gear[0]`. Default 1.
    pub gear: f32,
}

impl Default for MjPositionCfg {
    fn default() -> Self {
        MjPositionCfg {
            kp: 1.0,
            kv: None,
            dampratio: None,
            timeconst: 0.0,
            inheritrange: None,
            ctrl_range: None,
            force_range: None,
            act_range: None,
            gear: 1.0,
        }
    }
}

fn shortcut_err(
    shortcut: &'static str,
    field: &'static str,
    value: f32,
    reason: &'static str,
) -> Error {
    Error::InvalidShortcut {
        shortcut,
        field,
        value: value.to_string(),
        reason,
    }
}

impl MjPositionCfg {
    /// A position servo with this `kp` and MuJoCo's other defaults.
    pub fn new(kp: f32) -> Self {
        MjPositionCfg {
            kp,
            ..MjPositionCfg::default()
        }
    }

    fn check(&self, shortcut: &'static str) -> Result<f32, Error> {
        if !(self.kp.is_finite() && self.kp >= 0.0) {
            return Err(shortcut_err(
                shortcut,
                "kp",
                self.kp,
                "must be finite and >= 0",
            ));
        }
        if !(self.timeconst.is_finite() && self.timeconst >= 0.0) {
            return Err(shortcut_err(
                shortcut,
                "timeconst",
                self.timeconst,
                "must be finite and >= 0",
            ));
        }
        if !self.gear.is_finite() {
            return Err(shortcut_err(shortcut, "gear", self.gear, "must be finite"));
        }
        let kv = match (self.kv, self.dampratio) {
            (Some(kv), Some(_)) => {
                return Err(shortcut_err(
                    shortcut,
                    "kv",
                    kv,
                    "kv and dampratio cannot both be given",
                ))
            }
            (Some(kv), None) if !(kv.is_finite() && kv >= 0.0) => {
                return Err(shortcut_err(shortcut, "kv", kv, "must be finite and >= 0"))
            }
            (Some(kv), None) => kv,
            (None, Some(d)) => {
                if !(d.ratio.is_finite() && d.ratio >= 0.0) {
                    return Err(shortcut_err(
                        shortcut,
                        "dampratio",
                        d.ratio,
                        "must be finite and >= 0",
                    ));
                }
                if !(d.reflected_inertia.is_finite() && d.reflected_inertia > 0.0) {
                    return Err(shortcut_err(
                        shortcut,
                        "dampratio.reflected_inertia",
                        d.reflected_inertia,
                        "must be finite and > 0",
                    ));
                }
                // MuJoCo: biasprm[2] = −ratio·2·√(kp·m), in f64.
                let (ratio, kp, m) = (
                    f64::from(d.ratio),
                    f64::from(self.kp),
                    f64::from(d.reflected_inertia),
                );
                (ratio * 2.0 * (kp * m).sqrt()) as f32
            }
            (None, None) => 0.0,
        };
        Ok(kv)
    }

    fn inherited(
        &self,
        shortcut: &'static str,
        explicit: Option<[f32; 2]>,
        field: &'static str,
    ) -> Result<Option<[f32; 2]>, Error> {
        let Some(inherit) = self.inheritrange else {
            return Ok(explicit);
        };
        if !(inherit.scale.is_finite() && inherit.scale > 0.0) {
            return Err(shortcut_err(
                shortcut,
                "inheritrange",
                inherit.scale,
                "must be finite and > 0",
            ));
        }
        if explicit.is_some() {
            return Err(shortcut_err(
                shortcut,
                field,
                inherit.scale,
                "inheritrange cannot be combined with an explicit range",
            ));
        }
        let [r0, r1] = inherit.target_range.map(f64::from);
        if r0.partial_cmp(&r1) != Some(std::cmp::Ordering::Less) {
            return Err(shortcut_err(
                shortcut,
                "inheritrange.target_range",
                r0 as f32,
                "the target needs a range with lo < hi",
            ));
        }
        let mid = 0.5 * (r1 + r0);
        let rad = 0.5 * (r1 - r0) * f64::from(inherit.scale);
        Ok(Some([(mid - rad) as f32, (mid + rad) as f32]))
    }

    /// `<position>`: `force = kp·(ctrl − L) − kv·V` on the position target,
    /// with an exact filter on the control when `timeconst > 0`.
    pub fn position(&self) -> Result<MjGeneralCfg, Error> {
        let kv = self.check("position")?;
        if self.act_range.is_some() {
            return Err(shortcut_err(
                "position",
                "act_range",
                0.0,
                "a position servo has no activation range; use timeconst",
            ));
        }
        let filtered = self.timeconst > 0.0;
        Ok(MjGeneralCfg {
            command_field: CommandField::Position,
            dyn_type: if filtered {
                DynType::FilterExact
            } else {
                DynType::None
            },
            dynprm: prm(&[if filtered { self.timeconst } else { 1.0 }]),
            gainprm: prm(&[self.kp]),
            bias_type: BiasType::Affine,
            biasprm: prm(&[0.0, -self.kp, -kv]),
            ctrl_range: self.inherited("position", self.ctrl_range, "ctrl_range")?,
            force_range: self.force_range,
            gear: self.gear,
            ..MjGeneralCfg::default()
        })
    }

    /// `<intvelocity>`: the activation integrates the velocity command into
    /// a position setpoint; `force = kp·(act − L) − kv·V`.
    pub fn intvelocity(&self) -> Result<MjGeneralCfg, Error> {
        let kv = self.check("intvelocity")?;
        if self.timeconst > 0.0 {
            return Err(shortcut_err(
                "intvelocity",
                "timeconst",
                self.timeconst,
                "intvelocity has no timeconst",
            ));
        }
        Ok(MjGeneralCfg {
            command_field: CommandField::Velocity,
            dyn_type: DynType::Integrator,
            gainprm: prm(&[self.kp]),
            bias_type: BiasType::Affine,
            biasprm: prm(&[0.0, -self.kp, -kv]),
            ctrl_range: self.ctrl_range,
            act_range: self.inherited("intvelocity", self.act_range, "act_range")?,
            force_range: self.force_range,
            gear: self.gear,
            ..MjGeneralCfg::default()
        })
    }
}

/// MuJoCo's `<muscle>` attributes, with its defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MjMuscleCfg {
    /// Activation and deactivation time constants (s). Default (0.01, 0.04).
    pub timeconst: [f32; 2],
    /// Smoothing width of the time-constant switch. Default 0.
    pub tausmooth: f32,
    /// Operating length range, in optimal lengths. Default (0.75, 1.05).
    pub range: [f32; 2],
    /// Peak force; < 0 means `scale / acc0`. Default −1.
    pub force: f32,
    /// Force scale when `force < 0`. Default 200.
    pub scale: f32,
    /// Lower end of the force–length curve. Default 0.5.
    pub lmin: f32,
    /// Upper end of the force–length curve. Default 1.6.
    pub lmax: f32,
    /// Shortening velocity at zero force (optimal lengths/s). Default 1.5.
    pub vmax: f32,
    /// Passive force at `lmax`, relative to the peak. Default 1.3.
    pub fpmax: f32,
    /// Active force at saturating lengthening, relative. Default 1.2.
    pub fvmax: f32,
    /// The compiled `lengthrange` (required).
    pub length_range: [f32; 2],
    /// The compiled `acc0` (required when `force < 0`).
    pub acc0: f32,
    /// `ctrlrange`.
    pub ctrl_range: Option<[f32; 2]>,
    /// `forcerange`.
    pub force_range: Option<[f32; 2]>,
    /// `gear[0]`. Default 1.
    pub gear: f32,
}

impl Default for MjMuscleCfg {
    fn default() -> Self {
        let d = MJ_MUSCLE_DEFAULTS;
        MjMuscleCfg {
            timeconst: [0.01, 0.04],
            tausmooth: 0.0,
            range: [d[0], d[1]],
            force: d[2],
            scale: d[3],
            lmin: d[4],
            lmax: d[5],
            vmax: d[6],
            fpmax: d[7],
            fvmax: d[8],
            length_range: [0.0, 0.0],
            acc0: 0.0,
            ctrl_range: None,
            force_range: None,
            gear: 1.0,
        }
    }
}

impl MjMuscleCfg {
    /// `<muscle>` after MuJoCo's checks (`range[0] < range[1]`,
    /// `lmin < 1 < lmax`, positive time constants, scale, vmax, fpmax and
    /// fvmax, `tausmooth ≥ 0`), on the effort target (the excitation).
    pub fn compile(&self) -> Result<MjGeneralCfg, Error> {
        let e = |field, value, reason| Err(shortcut_err("muscle", field, value, reason));
        let positive = [
            ("timeconst[0]", self.timeconst[0]),
            ("timeconst[1]", self.timeconst[1]),
            ("scale", self.scale),
            ("vmax", self.vmax),
            ("fpmax", self.fpmax),
            ("fvmax", self.fvmax),
        ];
        for (field, value) in positive {
            if !(value.is_finite() && value > 0.0) {
                return e(field, value, "must be finite and > 0");
            }
        }
        if !(self.tausmooth.is_finite() && self.tausmooth >= 0.0) {
            return e("tausmooth", self.tausmooth, "must be finite and >= 0");
        }
        if self.range[0].partial_cmp(&self.range[1]) != Some(std::cmp::Ordering::Less) {
            return e("range", self.range[0], "needs range[0] < range[1]");
        }
        if !(self.lmin < 1.0 && 1.0 < self.lmax) {
            return e("lmin", self.lmin, "needs lmin < 1 < lmax");
        }
        if !self.force.is_finite() {
            return e("force", self.force, "must be finite");
        }
        if self.force < 0.0 && !(self.acc0.is_finite() && self.acc0 > 0.0) {
            return e(
                "acc0",
                self.acc0,
                "force < 0 takes the peak force from scale / acc0; give the compiled acc0 (> 0)",
            );
        }
        let p = [
            self.range[0],
            self.range[1],
            self.force,
            self.scale,
            self.lmin,
            self.lmax,
            self.vmax,
            self.fpmax,
            self.fvmax,
        ];
        Ok(MjGeneralCfg {
            command_field: CommandField::Effort,
            dyn_type: DynType::Muscle,
            dynprm: prm(&[self.timeconst[0], self.timeconst[1], self.tausmooth]),
            gain_type: GainType::Muscle,
            gainprm: prm(&p),
            bias_type: BiasType::Muscle,
            biasprm: prm(&p),
            ctrl_range: self.ctrl_range,
            force_range: self.force_range,
            act_range: None,
            act_early: false,
            gear: self.gear,
            length_range: self.length_range,
            acc0: self.acc0,
        })
    }
}

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
#[inline]
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
#[inline]
pub fn mj_muscle_peak(prm: &[f32; 9], acc0: f32) -> f32 {
    if prm[2] < 0.0 {
        prm[3] / mj_floor(acc0)
    } else {
        prm[2]
    }
}

/// Optimal length `L0` of a muscle (actuator-length units).
#[inline]
pub fn mj_muscle_l0(prm: &[f32; 9], length_lo: f32, length_hi: f32) -> f32 {
    (length_hi - length_lo) / mj_floor(prm[1] - prm[0])
}

/// MuJoCo's muscle active gain `−F0·FL(L)·FV(V)` (`mju_muscleGain`).
#[inline]
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
#[inline]
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
#[inline]
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
#[inline]
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
#[inline]
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
#[inline]
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
/// bias's cogging torque `biasprm[0]·sin(biasprm[1]·length + biasprm[2])`.
#[inline]
pub fn mj_force_after(a: &MjActuator, force: f32, length: f32) -> f32 {
    let b = &a.biasprm;
    if a.bias_type == BiasType::DcMotor as u32 && b[0] != 0.0 {
        force + b[0] * (b[1] * length + b[2]).sin()
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

#[cfg(test)]
mod tests {
    use super::*;

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
