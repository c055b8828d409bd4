//! The actuator kinds: a closed enum of plain config structs, each in its own
//! file next to its scalar law.
//!
//! Adding a kind: a file here with its `Cfg`, its law and its unit tests, one
//! variant in [`ActuatorCfg`] (the compiler then lists every `match` to
//! update), and its golden or property tests.

mod builtin;
mod dc_motor;
mod ideal_pd;
mod learned;
mod mj_general;
mod wrapped;

use std::fmt;

pub use builtin::{
    pass_through, BuiltinMotorCfg, BuiltinMuscleCfg, BuiltinPositionCfg, BuiltinVelocityCfg,
};
pub use dc_motor::{dc_motor_clip, dc_motor_effort, DcMotorCfg};
pub use ideal_pd::{clip, ideal_pd_effort, pd_torque, IdealPdCfg};
pub use learned::*;
pub use mj_general::*;
pub use wrapped::{detect_command_field, WrappedCfg};

use crate::error::Error;
use crate::robot::Transmission;

/// Stable numeric id of each kind (shared with the GPU kernels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
pub enum KindId {
    /// [`IdealPdCfg`].
    IdealPd = 0,
    /// [`DcMotorCfg`].
    DcMotor = 1,
    /// [`BuiltinPositionCfg`].
    BuiltinPosition = 2,
    /// [`BuiltinVelocityCfg`].
    BuiltinVelocity = 3,
    /// [`BuiltinMotorCfg`].
    BuiltinMotor = 4,
    /// [`BuiltinMuscleCfg`].
    BuiltinMuscle = 5,
    /// [`WrappedCfg`].
    Wrapped = 6,
    /// [`MjGeneralCfg`].
    MjGeneral = 7,
    /// [`LearnedMlpCfg`].
    LearnedMlp = 8,
    /// [`LstmNetCfg`].
    LstmNet = 9,
}

/// Which command target a pass-through actuator forwards into `ctrl`. The
/// value is the field's index in [`CMD_FIELDS`](crate::CMD_FIELDS) (shared
/// with the GPU kernels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum CommandField {
    /// `position_target`.
    Position = 0,
    /// `velocity_target`.
    Velocity = 1,
    /// `effort_target`.
    Effort = 2,
}

impl fmt::Display for CommandField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CommandField::Position => "position",
            CommandField::Velocity => "velocity",
            CommandField::Effort => "effort",
        })
    }
}

/// The law a backend evaluates for one ctrl column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Law {
    /// [`ideal_pd_effort`].
    IdealPd,
    /// [`dc_motor_effort`].
    DcMotor,
    /// [`pass_through`]: `ctrl` is the (delayed) target of this field.
    PassThrough(CommandField),
    /// MuJoCo's force law ([`mj_force`]) with this field as its control:
    /// the law stage forwards the field, the plan's MuJoCo stage turns it
    /// into `actuator_force`.
    MjGeneral(CommandField),
    /// A learned MLP ([`LearnedMlpCfg`]): the law stage forwards the
    /// position target, the plan's learned stage turns it into an effort.
    LearnedMlp,
    /// A learned LSTM ([`LstmNetCfg`]), likewise.
    LstmNet,
}

/// What a ctrl column holds, the contract with the simulator (as mjlab's
/// `ctrl` for MuJoCo).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CtrlMeaning {
    /// A force or torque Sinew computed: apply it (a MuJoCo `<motor>`, gear 1).
    Effort,
    /// The position target, for a simulator-native position actuator.
    PositionTarget,
    /// The velocity target, for a simulator-native velocity actuator.
    VelocityTarget,
    /// The effort target, for a simulator-native motor or muscle.
    EffortTarget,
    /// MuJoCo's `actuator_force`, computed by Sinew: apply it through the
    /// actuator's transmission, or apply the joint efforts
    /// ([`Backend::read_joint_effort`](crate::Backend::read_joint_effort)).
    ActuatorForce,
}

impl Law {
    /// What the column this law writes holds.
    pub fn meaning(self) -> CtrlMeaning {
        match self {
            Law::IdealPd | Law::DcMotor | Law::LearnedMlp | Law::LstmNet => CtrlMeaning::Effort,
            Law::PassThrough(CommandField::Position) => CtrlMeaning::PositionTarget,
            Law::PassThrough(CommandField::Velocity) => CtrlMeaning::VelocityTarget,
            Law::PassThrough(CommandField::Effort) => CtrlMeaning::EffortTarget,
            Law::MjGeneral(_) => CtrlMeaning::ActuatorForce,
        }
    }
}

/// A randomizable parameter, stored per (env, target) in a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Param {
    /// Proportional gain `kp` (N·m/rad). Finite, ≥ 0.
    Stiffness = 0,
    /// Derivative gain `kd` (N·m·s/rad). Finite, ≥ 0.
    Damping = 1,
    /// Symmetric output limit (N·m); `inf` for none. > 0.
    EffortLimit = 2,
    /// DC motor stall torque (N·m). Finite, > 0.
    SaturationEffort = 3,
    /// DC motor no-load speed (rad/s). Finite, > 0.
    VelocityLimit = 4,
}

impl Param {
    /// Every parameter, in table order.
    pub const ALL: [Param; 5] = [
        Param::Stiffness,
        Param::Damping,
        Param::EffortLimit,
        Param::SaturationEffort,
        Param::VelocityLimit,
    ];

    /// The canonical name.
    pub fn name(self) -> &'static str {
        match self {
            Param::Stiffness => "stiffness",
            Param::Damping => "damping",
            Param::EffortLimit => "effort_limit",
            Param::SaturationEffort => "saturation_effort",
            Param::VelocityLimit => "velocity_limit",
        }
    }

    /// Looks a parameter up by its name or an mjlab alias (`kp`, `kd`,
    /// `force_limit`, `velocity_limit_motor`).
    pub fn from_name(name: &str) -> Option<Param> {
        Some(match name {
            "stiffness" | "kp" => Param::Stiffness,
            "damping" | "kd" => Param::Damping,
            "effort_limit" | "force_limit" => Param::EffortLimit,
            "saturation_effort" => Param::SaturationEffort,
            "velocity_limit" | "velocity_limit_motor" => Param::VelocityLimit,
            _ => return None,
        })
    }

    /// Checks one value against this parameter's domain; the error is the rule broken.
    pub fn check(self, value: f32) -> Result<(), &'static str> {
        match self {
            Param::Stiffness | Param::Damping if !(value.is_finite() && value >= 0.0) => {
                Err("a gain must be finite and >= 0")
            }
            Param::EffortLimit if value.is_nan() || value <= 0.0 => {
                Err("an effort limit must be > 0 (inf for none)")
            }
            Param::SaturationEffort if !(value.is_finite() && value > 0.0) => {
                Err("a saturation effort must be finite and > 0")
            }
            Param::VelocityLimit if !(value.is_finite() && value > 0.0) => {
                Err("a velocity limit must be finite and > 0")
            }
            _ => Ok(()),
        }
    }
}

/// One actuator group's kind and its kind-specific settings.
///
/// Variant docs give the law; each struct's field docs give units and defaults.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ActuatorCfg {
    /// Explicit PD: `τ = clamp(kp·(q* − q) + kd·(q̇* − q̇) + τff, ±effort_limit)`.
    IdealPd(IdealPdCfg),
    /// PD torque clipped by the four-quadrant DC motor torque–speed curve.
    DcMotor(DcMotorCfg),
    /// Simulator-native position servo: `ctrl` = position target.
    BuiltinPosition(BuiltinPositionCfg),
    /// Simulator-native velocity servo: `ctrl` = velocity target.
    BuiltinVelocity(BuiltinVelocityCfg),
    /// Simulator-native motor: `ctrl` = effort target.
    BuiltinMotor(BuiltinMotorCfg),
    /// Simulator-native muscle: `ctrl` = effort target (activation command in [0, 1]).
    BuiltinMuscle(BuiltinMuscleCfg),
    /// An actuator the model already declares: `ctrl` = its command field.
    Wrapped(WrappedCfg),
    /// MuJoCo's general actuator, computed by Sinew: `ctrl` = `actuator_force`.
    MjGeneral(MjGeneralCfg),
    /// A learned MLP over histories of position error and velocity, then
    /// the DC motor clip.
    LearnedMlp(LearnedMlpCfg),
    /// A learned LSTM over `[q* − q, q̇]` with per-(env, target) state, then
    /// the DC motor clip.
    LstmNet(LstmNetCfg),
}

impl ActuatorCfg {
    /// The kind's id.
    pub fn kind_id(&self) -> KindId {
        match self {
            ActuatorCfg::IdealPd(_) => KindId::IdealPd,
            ActuatorCfg::DcMotor(_) => KindId::DcMotor,
            ActuatorCfg::BuiltinPosition(_) => KindId::BuiltinPosition,
            ActuatorCfg::BuiltinVelocity(_) => KindId::BuiltinVelocity,
            ActuatorCfg::BuiltinMotor(_) => KindId::BuiltinMotor,
            ActuatorCfg::BuiltinMuscle(_) => KindId::BuiltinMuscle,
            ActuatorCfg::Wrapped(_) => KindId::Wrapped,
            ActuatorCfg::MjGeneral(_) => KindId::MjGeneral,
            ActuatorCfg::LearnedMlp(_) => KindId::LearnedMlp,
            ActuatorCfg::LstmNet(_) => KindId::LstmNet,
        }
    }

    /// The kind's name, as in mjlab without "Actuator".
    pub fn kind_name(&self) -> &'static str {
        match self {
            ActuatorCfg::IdealPd(_) => "IdealPd",
            ActuatorCfg::DcMotor(_) => "DcMotor",
            ActuatorCfg::BuiltinPosition(_) => "BuiltinPosition",
            ActuatorCfg::BuiltinVelocity(_) => "BuiltinVelocity",
            ActuatorCfg::BuiltinMotor(_) => "BuiltinMotor",
            ActuatorCfg::BuiltinMuscle(_) => "BuiltinMuscle",
            ActuatorCfg::Wrapped(_) => "Wrapped",
            ActuatorCfg::MjGeneral(_) => "MjGeneral",
            ActuatorCfg::LearnedMlp(_) => "LearnedMlp",
            ActuatorCfg::LstmNet(_) => "LstmNet",
        }
    }

    /// The parameters Sinew keeps per (env, target) for this kind.
    pub fn params(&self) -> &'static [Param] {
        match self {
            ActuatorCfg::IdealPd(_) => &[Param::Stiffness, Param::Damping, Param::EffortLimit],
            ActuatorCfg::DcMotor(_) => &Param::ALL,
            ActuatorCfg::LearnedMlp(_) | ActuatorCfg::LstmNet(_) => &crate::net::LEARNED_LIMITS,
            _ => &[],
        }
    }

    /// The configured (default) value of one of [`ActuatorCfg::params`].
    pub fn param_value(&self, param: Param) -> Option<f32> {
        match (self, param) {
            (ActuatorCfg::IdealPd(c), Param::Stiffness) => Some(c.stiffness),
            (ActuatorCfg::IdealPd(c), Param::Damping) => Some(c.damping),
            (ActuatorCfg::IdealPd(c), Param::EffortLimit) => Some(c.effort_limit),
            (ActuatorCfg::DcMotor(c), Param::Stiffness) => Some(c.stiffness),
            (ActuatorCfg::DcMotor(c), Param::Damping) => Some(c.damping),
            (ActuatorCfg::DcMotor(c), Param::EffortLimit) => Some(c.effort_limit),
            (ActuatorCfg::DcMotor(c), Param::SaturationEffort) => Some(c.saturation_effort),
            (ActuatorCfg::DcMotor(c), Param::VelocityLimit) => Some(c.velocity_limit),
            (ActuatorCfg::LearnedMlp(c), Param::EffortLimit) => Some(c.effort_limit),
            (ActuatorCfg::LearnedMlp(c), Param::SaturationEffort) => Some(c.saturation_effort),
            (ActuatorCfg::LearnedMlp(c), Param::VelocityLimit) => Some(c.velocity_limit),
            (ActuatorCfg::LstmNet(c), Param::EffortLimit) => Some(c.effort_limit),
            (ActuatorCfg::LstmNet(c), Param::SaturationEffort) => Some(c.saturation_effort),
            (ActuatorCfg::LstmNet(c), Param::VelocityLimit) => Some(c.velocity_limit),
            _ => None,
        }
    }

    /// The law of a kind whose law does not depend on the robot (every kind
    /// but [`ActuatorCfg::Wrapped`] without a `command_field`).
    pub fn law(&self) -> Option<Law> {
        Some(match self {
            ActuatorCfg::IdealPd(_) => Law::IdealPd,
            ActuatorCfg::DcMotor(_) => Law::DcMotor,
            ActuatorCfg::BuiltinPosition(_) => Law::PassThrough(CommandField::Position),
            ActuatorCfg::BuiltinVelocity(_) => Law::PassThrough(CommandField::Velocity),
            ActuatorCfg::BuiltinMotor(_) | ActuatorCfg::BuiltinMuscle(_) => {
                Law::PassThrough(CommandField::Effort)
            }
            ActuatorCfg::Wrapped(w) => Law::PassThrough(w.command_field?),
            ActuatorCfg::MjGeneral(c) => Law::MjGeneral(c.command_field),
            ActuatorCfg::LearnedMlp(_) => Law::LearnedMlp,
            ActuatorCfg::LstmNet(_) => Law::LstmNet,
        })
    }

    /// The `ctrlrange` and `forcerange` of the simulator actuator this kind
    /// compiles to (mjlab's `edit_spec`), `None` where not limited.
    /// Informational: Sinew itself applies only the kind's own law.
    pub fn ranges(&self) -> (Option<[f32; 2]>, Option<[f32; 2]>) {
        let sym = |l: f32| Some([-l, l]);
        match self {
            ActuatorCfg::IdealPd(c) => (sym(c.effort_limit), sym(c.effort_limit)),
            ActuatorCfg::DcMotor(c) => (sym(c.effort_limit), sym(c.effort_limit)),
            ActuatorCfg::BuiltinMotor(c) => (sym(c.effort_limit), sym(c.effort_limit)),
            ActuatorCfg::BuiltinPosition(c) => (None, c.effort_limit.and_then(sym)),
            ActuatorCfg::BuiltinVelocity(c) => (None, c.effort_limit.and_then(sym)),
            ActuatorCfg::BuiltinMuscle(_) => (Some([0.0, 1.0]), None),
            ActuatorCfg::Wrapped(_) => (None, None),
            ActuatorCfg::MjGeneral(c) => (c.ctrl_range, c.force_range),
            ActuatorCfg::LearnedMlp(c) => (sym(c.effort_limit), sym(c.effort_limit)),
            ActuatorCfg::LstmNet(c) => (sym(c.effort_limit), sym(c.effort_limit)),
        }
    }

    /// Checks every setting of the kind and that it can drive `transmission`.
    pub fn validate(&self, group: &str, transmission: Transmission) -> Result<(), Error> {
        let site_ok = matches!(
            self,
            ActuatorCfg::BuiltinMotor(_) | ActuatorCfg::Wrapped(_) | ActuatorCfg::MjGeneral(_)
        );
        if transmission == Transmission::Site && !site_ok {
            return Err(Error::TransmissionNotSupported {
                group: group.to_owned(),
                kind: self.kind_name(),
                transmission,
            });
        }
        for &param in self.params() {
            let value = self.param_value(param).unwrap_or(f32::NAN);
            param
                .check(value)
                .map_err(|reason| invalid(group, param.name(), value, reason))?;
        }
        match self {
            ActuatorCfg::BuiltinPosition(c) => {
                check(group, "stiffness", c.stiffness, Param::Stiffness)?;
                check(group, "damping", c.damping, Param::Damping)?;
                check_opt_limit(group, c.effort_limit)
            }
            ActuatorCfg::BuiltinVelocity(c) => {
                check(group, "damping", c.damping, Param::Damping)?;
                check_opt_limit(group, c.effort_limit)
            }
            ActuatorCfg::BuiltinMotor(c) => {
                check(group, "effort_limit", c.effort_limit, Param::EffortLimit)?;
                if !(c.gear.is_finite() && c.gear != 0.0) {
                    return Err(invalid(
                        group,
                        "gear",
                        c.gear,
                        "the gear must be finite and non-zero",
                    ));
                }
                Ok(())
            }
            ActuatorCfg::BuiltinMuscle(c) => c.validate(group),
            ActuatorCfg::MjGeneral(c) => c.validate(group),
            ActuatorCfg::LearnedMlp(c) => c.validate(group),
            _ => Ok(()),
        }
    }

    /// The MuJoCo actuator a builtin kind compiles to (mjlab's `edit_spec`),
    /// for groups that compute their force
    /// ([`GroupCfg::compute_force`](crate::GroupCfg::compute_force)). `None`
    /// for the kinds Sinew computes itself and for wrapped groups, whose
    /// actuators the robot describes
    /// ([`NativeActuator::general`](crate::NativeActuator::general)).
    pub fn mujoco_equivalent(&self, group: &str) -> Result<Option<MjGeneralCfg>, Error> {
        let sym = |l: f32| [-l, l];
        let cfg = match self {
            ActuatorCfg::BuiltinPosition(c) => MjGeneralCfg {
                force_range: c.effort_limit.map(sym),
                ..MjPositionCfg {
                    kp: c.stiffness,
                    kv: Some(c.damping),
                    ..MjPositionCfg::default()
                }
                .position()
                .map_err(|e| e.in_group(group))?
            },
            ActuatorCfg::BuiltinVelocity(c) => MjGeneralCfg {
                force_range: c.effort_limit.map(sym),
                ..MjGeneralCfg::velocity(c.damping)
            },
            ActuatorCfg::BuiltinMotor(c) => MjGeneralCfg::motor()
                .with_gear(c.gear)
                .with_ctrl_range(sym(c.effort_limit))
                .with_force_range(sym(c.effort_limit)),
            ActuatorCfg::BuiltinMuscle(c) => {
                if c.length_range.0 >= c.length_range.1 {
                    return Err(invalid(
                        group,
                        "length_range",
                        c.length_range.0,
                        "computing a muscle's force needs its compiled lengthrange (lo < hi)",
                    ));
                }
                MjMuscleCfg {
                    timeconst: [c.timeconst.0, c.timeconst.1],
                    tausmooth: c.tausmooth,
                    range: [c.range.0, c.range.1],
                    force: c.force,
                    scale: c.scale,
                    lmin: c.lmin,
                    lmax: c.lmax,
                    vmax: c.vmax,
                    fpmax: c.fpmax,
                    fvmax: c.fvmax,
                    length_range: [c.length_range.0, c.length_range.1],
                    acc0: c.acc0,
                    ctrl_range: Some([0.0, 1.0]),
                    force_range: None,
                    gear: c.gear,
                }
                .compile()
                .map_err(|e| e.in_group(group))?
            }
            _ => return Ok(None),
        };
        Ok(Some(cfg))
    }
}

fn check(group: &str, field: &str, value: f32, rule: Param) -> Result<(), Error> {
    rule.check(value)
        .map_err(|reason| invalid(group, field, value, reason))
}

fn check_opt_limit(group: &str, limit: Option<f32>) -> Result<(), Error> {
    limit.map_or(Ok(()), |l| {
        check(group, "effort_limit", l, Param::EffortLimit)
    })
}

/// An [`Error::InvalidParam`] for a float value.
pub(crate) fn invalid(group: &str, field: &str, value: f32, reason: &'static str) -> Error {
    Error::InvalidParam {
        group: group.to_owned(),
        field: field.to_owned(),
        value: value.to_string(),
        reason,
    }
}

macro_rules! impl_from_cfg {
    ($($variant:ident($cfg:ty)),* $(,)?) => {
        $(impl From<$cfg> for ActuatorCfg {
            fn from(cfg: $cfg) -> Self {
                ActuatorCfg::$variant(cfg)
            }
        })*
    };
}

impl_from_cfg!(
    IdealPd(IdealPdCfg),
    DcMotor(DcMotorCfg),
    BuiltinPosition(BuiltinPositionCfg),
    BuiltinVelocity(BuiltinVelocityCfg),
    BuiltinMotor(BuiltinMotorCfg),
    BuiltinMuscle(BuiltinMuscleCfg),
    Wrapped(WrappedCfg),
    MjGeneral(MjGeneralCfg),
    LearnedMlp(LearnedMlpCfg),
    LstmNet(LstmNetCfg),
);
