//! The actuator kinds: a closed enum of plain config structs, each in its own
//! file next to its spec and scalar law ([`Kind`]).
//!
//! Adding a kind: a file here with its `Cfg`, its [`Kind`] implementation
//! and unit tests; its WGSL twin in `shaders/`; one line in the registry
//! below; its golden or property tests. Everything that lists kinds
//! ([`ActuatorCfg`], [`KindId`], both backends' dispatch, the WGSL switch)
//! is generated from the registry.

pub mod bam;
mod builtin;
mod dc_motor;
mod ideal_pd;
mod learned;
pub mod mimo;
mod mj_general;
pub mod mj_stateful;
mod remotized_pd;
pub mod spec;
mod wrapped;

use std::fmt;

pub use bam::{
    BamBenchCfg, BamCurrentCfg, BamErobCfg, BamFriction, BamGo1Cfg, BamSts3215Cfg, BamVoltageCfg,
    Pendulum,
};
pub use builtin::{
    pass_through, BuiltinMotorCfg, BuiltinMuscleCfg, BuiltinPositionCfg, BuiltinVelocityCfg,
};
pub use dc_motor::{dc_motor_clip, dc_motor_effort, DcMotorCfg};
pub use ideal_pd::{clip, ideal_pd_effort, pd_torque, IdealPdCfg};
pub use learned::*;
pub use mimo::{MimoMuscleCfg, MimoPositionalCfg, MimoSpringDamperCfg};
pub use mj_general::*;
pub use mj_stateful::{
    CtrlInputs, DcMotorBias, DcMotorMjcf, DcMotorMode, DcMotorParams, MjDcMotorCfg, MjPidCfg,
    MjlabDcMotor, PidMjcf,
};
pub use remotized_pd::{
    lookup_data, lookup_limit, lookup_limits, RemotizedPdCfg, LOOKUP_HEAD, MAX_LOOKUP_ROWS,
};
pub use spec::{
    planes_of, Domain, Kind, KindVisitor, LawIo, ParamSpec, PlaneSpec, SpecInfo, Stage, StateSpec,
    ACT_DOT, MAX_INPUTS, MAX_OUTPUTS, MAX_PARAMS, MAX_STATE, MJ_ACT, MJ_ACT_SLOT, RAW_FORCE,
};
pub use wrapped::{detect_command_field, WrappedCfg};

use crate::error::Error;
use crate::robot::Transmission;

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

impl CommandField {
    /// The three command targets, in `CMD_FIELDS` order.
    pub const ALL: [CommandField; 3] = [
        CommandField::Position,
        CommandField::Velocity,
        CommandField::Effort,
    ];
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

impl CtrlMeaning {
    /// The meaning of a column that forwards `field` to a simulator-native actuator.
    pub fn forwarded(field: CommandField) -> CtrlMeaning {
        match field {
            CommandField::Position => CtrlMeaning::PositionTarget,
            CommandField::Velocity => CtrlMeaning::VelocityTarget,
            CommandField::Effort => CtrlMeaning::EffortTarget,
        }
    }
}

/// The registry: one line per kind. It generates [`ActuatorCfg`] (a variant
/// per line, documented by the line's doc), [`KindId`] (the kinds' stable
/// numeric ids, shared with the GPU kernels, in line order) and every
/// dispatch over kinds.
macro_rules! registry {
    ($($(#[$doc:meta])* $variant:ident($cfg:ty),)*) => {
        /// One actuator group's kind and its kind-specific settings.
        ///
        /// Variant docs give the law; each struct's field docs give units and defaults.
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub enum ActuatorCfg {
            $($(#[$doc])* $variant($cfg),)*
        }

        /// Stable numeric id of each kind (shared with the GPU kernels).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u32)]
        pub enum KindId {
            $(#[doc = concat!("[`", stringify!($cfg), "`].")] $variant,)*
        }

        impl KindId {
            /// Every kind, in id order.
            pub const ALL: &'static [KindId] = &[$(KindId::$variant),*];

            /// The kind whose [`Kind::KEY`] is `key`.
            pub fn from_key(key: &str) -> Option<KindId> {
                KindId::ALL.iter().copied().find(|k| k.spec().key == key)
            }

            /// The kind's [`Kind::from_fields`].
            pub fn from_fields<'de, D: serde::Deserializer<'de>>(
                self,
                fields: D,
            ) -> Result<ActuatorCfg, D::Error> {
                match self {
                    $(KindId::$variant => <$cfg as Kind>::from_fields(fields).map(ActuatorCfg::$variant),)*
                }
            }

            /// The kind's [`Kind::example`].
            pub fn example(self) -> ActuatorCfg {
                match self {
                    $(KindId::$variant => ActuatorCfg::$variant(<$cfg as Kind>::example()),)*
                }
            }

            /// Runs `visitor` with this kind's config type.
            #[inline(always)]
            pub fn visit<V: KindVisitor>(self, visitor: V) -> V::Output {
                match self {
                    $(KindId::$variant => visitor.visit::<$cfg>(),)*
                }
            }
        }

        impl ActuatorCfg {
            /// The kind's id.
            pub fn kind_id(&self) -> KindId {
                match self {
                    $(ActuatorCfg::$variant(_) => KindId::$variant,)*
                }
            }

            /// The state Sinew keeps per (env, target) for this configuration,
            /// in slot order ([`Kind::state_slots`]).
            pub fn state(&self) -> std::borrow::Cow<'static, [StateSpec]> {
                match self {
                    $(ActuatorCfg::$variant(c) => Kind::state_slots(c),)*
                }
            }

            /// The configured value of parameter slot `k` of [`ActuatorCfg::params`].
            pub fn param_value(&self, k: usize) -> f32 {
                match self {
                    $(ActuatorCfg::$variant(c) => Kind::param_value(c, k),)*
                }
            }

            fn validate_kind(&self, group: &str) -> Result<(), Error> {
                match self {
                    $(ActuatorCfg::$variant(c) => Kind::validate(c, group),)*
                }
            }

            /// The command field the law forwards or computes from;
            /// `None` when the plan resolves it from the robot.
            pub fn command_field(&self) -> Option<CommandField> {
                match self {
                    $(ActuatorCfg::$variant(c) => Kind::command_field(c),)*
                }
            }

            /// What the kind's ctrl columns hold, given their command field.
            pub fn meaning(&self, field: CommandField) -> CtrlMeaning {
                match self {
                    $(ActuatorCfg::$variant(c) => Kind::meaning(c, field),)*
                }
            }

            /// Per-group constants of the law ([`Kind::group_data`]).
            pub fn group_data(&self) -> Vec<f32> {
                match self {
                    $(ActuatorCfg::$variant(c) => Kind::group_data(c),)*
                }
            }

            /// The `ctrlrange` and `forcerange` of the simulator actuator this kind
            /// compiles to (mjlab's `edit_spec`), `None` where not limited.
            /// Informational: Sinew itself applies only the kind's own law.
            pub fn ranges(&self) -> (Option<[f32; 2]>, Option<[f32; 2]>) {
                match self {
                    $(ActuatorCfg::$variant(c) => Kind::ranges(c),)*
                }
            }

            /// The MuJoCo actuator a kind compiles to (mjlab's `edit_spec`),
            /// for groups that compute their force
            /// ([`GroupCfg::compute_force`](crate::GroupCfg::compute_force)). `None`
            /// for the kinds Sinew computes itself and for wrapped groups, whose
            /// actuators the robot describes
            /// ([`NativeActuator::general`](crate::NativeActuator::general)).
            pub fn mujoco_equivalent(&self, group: &str) -> Result<Option<MjGeneralCfg>, Error> {
                match self {
                    $(ActuatorCfg::$variant(c) => Kind::mujoco_equivalent(c, group),)*
                }
            }

            /// mjlab's warnings about the settings (not errors).
            pub fn warnings(&self, group: &str) -> Vec<String> {
                match self {
                    $(ActuatorCfg::$variant(c) => Kind::warnings(c, group),)*
                }
            }
        }

        $(const _: () = assert!(
            <$cfg as Kind>::PARAMS.len() <= spec::MAX_PARAMS
                && <$cfg as Kind>::STATE.len() <= spec::MAX_STATE
                && <$cfg as Kind>::INPUTS.len() <= spec::MAX_INPUTS
                && <$cfg as Kind>::OUTPUTS.len() <= spec::MAX_OUTPUTS,
            "a kind declares more slots or planes than MAX_PARAMS, MAX_STATE, MAX_INPUTS or MAX_OUTPUTS"
        );)*

        $(impl From<$cfg> for ActuatorCfg {
            fn from(cfg: $cfg) -> Self {
                ActuatorCfg::$variant(cfg)
            }
        })*
    };
}

registry! {
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
    /// PD clamped by an angle-dependent torque limit from a lookup table.
    RemotizedPd(RemotizedPdCfg),
    /// BAM's voltage-controlled servo (Dynamixel MX, XL-320, XL-330) with
    /// the M1–M6 friction budget as outputs.
    BamVoltage(BamVoltageCfg),
    /// BAM's Feetech STS3215: the voltage law on a rate-limited target.
    BamSts3215(BamSts3215Cfg),
    /// BAM's current-controlled servo (the generic law, or the XL-330's
    /// bus-current regulation).
    BamCurrent(BamCurrentCfg),
    /// BAM's eRob actuator: current PD with `D·√kp` damping, back-EMF clip.
    BamErob(BamErobCfg),
    /// BAM's Unitree Go1 actuator: clipped PD.
    BamGo1(BamGo1Cfg),
    /// BAM's M1–M6 friction budget on its own: forwards the effort target as
    /// τ_m and writes the friction outputs.
    BamFriction(BamFriction),
    /// [`BamVoltageCfg`] on BAM's pendulum testbench.
    BamVoltageBench(BamBenchCfg<BamVoltageCfg>),
    /// [`BamSts3215Cfg`] on BAM's pendulum testbench.
    BamSts3215Bench(BamBenchCfg<BamSts3215Cfg>),
    /// [`BamCurrentCfg`] on BAM's pendulum testbench.
    BamCurrentBench(BamBenchCfg<BamCurrentCfg>),
    /// [`BamErobCfg`] on BAM's pendulum testbench.
    BamErobBench(BamBenchCfg<BamErobCfg>),
    /// [`BamGo1Cfg`] on BAM's pendulum testbench.
    BamGo1Bench(BamBenchCfg<BamGo1Cfg>),
    /// MIMo's spring-damper motor: the action clipped to its action space
    /// as the motor's `ctrl`, `gear·u` and the cost as outputs.
    MimoSpringDamper(MimoSpringDamperCfg),
    /// MIMo's two-muscle joint: activations as state, MIMo's FL/FV/FP
    /// curves, the joint torque.
    MimoMuscle(MimoMuscleCfg),
    /// MIMo's positional model: the target clipped to the joint range, for
    /// the simulator's joint lock.
    MimoPositional(MimoPositionalCfg),
    /// MuJoCo 4's `<pid>` on a joint: slew, anti-windup integral, force range.
    MjPid(MjPidCfg),
    /// MuJoCo 4's `<dcmotor>` on a joint: back-EMF, controller, inductance,
    /// thermal model, saturation, cogging and LuGre friction.
    MjDcMotor(MjDcMotorCfg),
}

impl KindId {
    /// The kind's declarations.
    pub fn spec(self) -> SpecInfo {
        self.visit(spec::InfoOf)
    }

    /// The kind's name, as in mjlab without "Actuator".
    pub fn name(self) -> &'static str {
        self.spec().name
    }
}

impl ActuatorCfg {
    /// The kind's name, as in mjlab without "Actuator".
    pub fn kind_name(&self) -> &'static str {
        self.kind_id().name()
    }

    /// The parameters Sinew keeps per (env, target) for this kind, in slot order.
    pub fn params(&self) -> &'static [ParamSpec] {
        self.kind_id().spec().params
    }

    /// Where the kind's columns go after the law.
    pub fn stage(&self) -> Stage {
        self.kind_id().spec().stage
    }

    /// Checks every setting of the kind and that it can drive `transmission`.
    pub fn validate(&self, group: &str, transmission: Transmission) -> Result<(), Error> {
        if transmission == Transmission::Site && !self.kind_id().spec().sites {
            return Err(Error::TransmissionNotSupported {
                group: group.to_owned(),
                kind: self.kind_name(),
                transmission,
            });
        }
        for (k, param) in self.params().iter().enumerate() {
            let value = self.param_value(k);
            param
                .domain
                .check(value)
                .map_err(|reason| invalid(group, param.name, value, reason))?;
        }
        self.validate_kind(group)
    }
}

pub(crate) fn check(group: &str, field: &str, value: f32, rule: Domain) -> Result<(), Error> {
    rule.check(value)
        .map_err(|reason| invalid(group, field, value, reason))
}

pub(crate) fn check_opt_limit(group: &str, limit: Option<f32>) -> Result<(), Error> {
    limit.map_or(Ok(()), |l| check(group, "effort_limit", l, Domain::Limit))
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
