//! Wrapped native actuators (mjlab's `XmlActuatorCfg`): actuators the model
//! already declares, found by target name; Sinew forwards their command field.

use super::spec::{Kind, LawIo, ParamSpec, StateSpec};
use super::{pass_through, CommandField, CtrlMeaning};
use crate::robot::{BiasType, DynType, GainType, NativeActuator};

/// Wraps the native actuators the robot declares on the matched targets.
///
/// Targets without a native actuator are left out (mjlab); a group whose
/// targets have none is an error. With `command_field: None` the field is
/// detected from each actuator's gain/bias description ([`detect_command_field`]),
/// and a group mixing fields is an error.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WrappedCfg {
    /// The command forwarded into `ctrl`; `None` detects it (the default).
    pub command_field: Option<CommandField>,
}

impl Kind for WrappedCfg {
    const NAME: &'static str = "Wrapped";
    const KEY: &'static str = "wrapped";
    const PARAMS: &'static [ParamSpec] = &[];
    const STATE: &'static [StateSpec] = &[];
    const READS: &'static [CommandField] = &CommandField::ALL;
    const WGSL: &'static str = include_str!("../../../../shaders/builtin.wgsl");
    const SITES: bool = true;

    fn param_value(&self, k: usize) -> f32 {
        unreachable!("Wrapped has no parameter slot {k}")
    }

    fn example() -> Self {
        WrappedCfg::default()
    }

    fn command_field(&self) -> Option<CommandField> {
        self.command_field
    }

    fn meaning(&self, field: CommandField) -> CtrlMeaning {
        CtrlMeaning::forwarded(field)
    }

    #[inline(always)]
    fn law<I: LawIo>(io: &mut I) -> f32 {
        pass_through(io.field_target())
    }
}

/// mjlab's `detect_command_field`, checked in its order muscle → position →
/// velocity → motor; `None` when no rule fits.
///
/// - muscle: muscle gain or bias or dynamics → the effort target (activation command);
/// - position: fixed gain, affine bias, no or exact-filter dynamics, `gainprm[0] == −biasprm[1]`;
/// - velocity: fixed gain, affine bias, `biasprm[1] == 0`, `gainprm[0] == −biasprm[2]`;
/// - motor: fixed gain, no bias.
pub fn detect_command_field(actuator: &NativeActuator) -> Option<CommandField> {
    let a = actuator;
    if a.gain == GainType::Muscle || a.bias == BiasType::Muscle || a.dyn_type == DynType::Muscle {
        return Some(CommandField::Effort);
    }
    let fixed_affine = a.gain == GainType::Fixed && a.bias == BiasType::Affine;
    if fixed_affine
        && matches!(a.dyn_type, DynType::None | DynType::FilterExact)
        && a.gainprm[0] == -a.biasprm[1]
    {
        return Some(CommandField::Position);
    }
    if fixed_affine && a.biasprm[1] == 0.0 && a.gainprm[0] == -a.biasprm[2] {
        return Some(CommandField::Velocity);
    }
    if a.gain == GainType::Fixed && a.bias == BiasType::None {
        return Some(CommandField::Effort);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::robot::Transmission;

    fn native(bias: BiasType, gainprm: [f32; 3], biasprm: [f32; 3]) -> NativeActuator {
        NativeActuator {
            name: "a".into(),
            transmission: Transmission::Joint,
            target: "j".into(),
            gain: GainType::Fixed,
            bias,
            dyn_type: DynType::None,
            gainprm,
            biasprm,
            general: None,
        }
    }

    #[test]
    fn detects_mujoco_shortcuts() {
        // <position kp=30 kv=2>: gainprm [30], biasprm [0, -30, -2]
        let pos = native(BiasType::Affine, [30.0, 0.0, 0.0], [0.0, -30.0, -2.0]);
        assert_eq!(detect_command_field(&pos), Some(CommandField::Position));
        // <velocity kv=4>: gainprm [4], biasprm [0, 0, -4]
        let vel = native(BiasType::Affine, [4.0, 0.0, 0.0], [0.0, 0.0, -4.0]);
        assert_eq!(detect_command_field(&vel), Some(CommandField::Velocity));
        let motor = native(BiasType::None, [1.0, 0.0, 0.0], [0.0; 3]);
        assert_eq!(detect_command_field(&motor), Some(CommandField::Effort));
        let odd = native(BiasType::Affine, [1.0, 0.0, 0.0], [0.0, -2.0, 0.0]);
        assert_eq!(detect_command_field(&odd), None);
    }
}
