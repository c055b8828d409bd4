//! mjlab's `BuiltinDcMotorActuatorCfg` on top of `<dcmotor>`.

use super::*;

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
