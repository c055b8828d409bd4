//! One actuator group as the user writes it.

use crate::delay::DelayCfg;
use crate::error::Error;
use crate::kinds::{invalid, ActuatorCfg, CtrlMeaning};
use crate::robot::Transmission;

/// One actuator group: a kind applied to the targets its regexes match.
///
/// ```
/// use sinew_core::{DcMotorCfg, DelayCfg, GroupCfg};
/// let legs = GroupCfg::new("legs", [".*_hip", ".*_thigh"], DcMotorCfg {
///     stiffness: 20.0, damping: 0.5, effort_limit: 23.7,
///     saturation_effort: 23.7, velocity_limit: 30.1,
/// })
/// .with_delay(DelayCfg::new(0, 2));
/// assert_eq!(legs.targets.len(), 2);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct GroupCfg {
    /// Unique name, used by setters and in error messages.
    pub name: String,
    /// Regexes, each matched in full against the transmission's names. A name
    /// matched by two regexes, or a regex matching nothing, is an error.
    pub targets: Vec<String>,
    /// The namespace the regexes match in. Default [`Transmission::Joint`].
    pub transmission: Transmission,
    /// The kind and its settings.
    pub actuator: ActuatorCfg,
    /// Reflected rotor inertia to set on the targets (kg·m²); `None` keeps
    /// the model's value. Metadata for the simulator.
    pub armature: Option<f32>,
    /// Dry friction to set on the targets (N·m); `None` keeps the model's.
    pub frictionloss: Option<f32>,
    /// Viscous damping to set on the targets (N·m·s/rad); `None` keeps the model's.
    pub viscous_damping: Option<f32>,
    /// Optional command delay in front of the kind.
    pub delay: Option<DelayCfg>,
    /// For builtin and wrapped kinds: compute MuJoCo's `actuator_force`
    /// from the forwarded command (the kind's MuJoCo equivalent, or the
    /// native actuator's [`general`](crate::NativeActuator::general)
    /// description) instead of passing the command through. Default false.
    pub compute_force: bool,
}

impl GroupCfg {
    /// A joint group with no metadata overrides and no delay.
    pub fn new<S: Into<String>>(
        name: impl Into<String>,
        targets: impl IntoIterator<Item = S>,
        actuator: impl Into<ActuatorCfg>,
    ) -> Self {
        GroupCfg {
            name: name.into(),
            targets: targets.into_iter().map(Into::into).collect(),
            transmission: Transmission::Joint,
            actuator: actuator.into(),
            armature: None,
            frictionloss: None,
            viscous_damping: None,
            delay: None,
            compute_force: false,
        }
    }

    /// The same builtin or wrapped group computing MuJoCo's force itself
    /// ([`GroupCfg::compute_force`]).
    pub fn with_computed_force(self) -> Self {
        GroupCfg {
            compute_force: true,
            ..self
        }
    }

    /// The same group acting through another transmission.
    pub fn with_transmission(self, transmission: Transmission) -> Self {
        GroupCfg {
            transmission,
            ..self
        }
    }

    /// The same group with a delay in front.
    pub fn with_delay(self, delay: DelayCfg) -> Self {
        GroupCfg {
            delay: Some(delay),
            ..self
        }
    }

    /// The same group setting this armature on its targets.
    pub fn with_armature(self, armature: f32) -> Self {
        GroupCfg {
            armature: Some(armature),
            ..self
        }
    }

    /// Checks the kind, the metadata and the delay (not the targets).
    pub fn validate(&self) -> Result<(), Error> {
        let group = self.name.as_str();
        self.actuator.validate(group, self.transmission)?;
        let forwards = matches!(
            self.actuator.meaning(crate::kinds::CommandField::Effort),
            CtrlMeaning::PositionTarget | CtrlMeaning::VelocityTarget | CtrlMeaning::EffortTarget
        );
        if self.compute_force && !forwards {
            return Err(Error::InvalidParam {
                group: group.to_owned(),
                field: "compute_force".into(),
                value: "true".into(),
                reason:
                    "only builtin and wrapped kinds forward a command; this kind has its own law",
            });
        }
        let metadata = [
            ("armature", self.armature),
            ("frictionloss", self.frictionloss),
            ("viscous_damping", self.viscous_damping),
        ];
        for (field, value) in metadata {
            let Some(value) = value else { continue };
            if !(value.is_finite() && value >= 0.0) {
                return Err(invalid(group, field, value, "must be finite and >= 0"));
            }
            if self.transmission == Transmission::Site && value > 0.0 {
                return Err(invalid(
                    group,
                    field,
                    value,
                    "a site has no armature, friction or damping",
                ));
            }
        }
        if let Some(delay) = &self.delay {
            delay.validate(group)?;
        }
        Ok(())
    }
}
