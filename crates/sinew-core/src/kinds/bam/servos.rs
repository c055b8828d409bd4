//! The servo firmwares BAM models: their configs, parameter lists and
//! motor torques (`bam/actuator.py`, `bam/dynamixel`, `bam/feetech`,
//! `bam/erob`, `bam/unitree`).

use super::{
    concat, dc_motor_torque, param, servo_law, BamFriction, Servo, BENCH_PARAMS, BENCH_STATE,
    FRICTION_COUNT, FRICTION_PARAMS, SERVO_INPUTS, SERVO_OUTPUTS,
};
use crate::kinds::ideal_pd::clip;
use crate::kinds::spec::{
    param_slot, state_slot, Domain, Kind, LawIo, ParamSpec, PlaneSpec, StateSpec,
};
use crate::kinds::CommandField;

const WGSL: &str = include_str!("../../../../../shaders/bam.wgsl");

const KP: ParamSpec = param(
    "kp",
    &[],
    "firmware units",
    "The firmware's proportional gain (the servo's P register).",
    Domain::Gain,
);
const VIN: ParamSpec = param("vin", &[], "V", "Supply voltage.", Domain::Positive);
const KT: ParamSpec = param(
    "kt",
    &[],
    "N·m/A",
    "Motor torque constant k_t.",
    Domain::Positive,
);
const RESISTANCE: ParamSpec = param(
    "resistance",
    &["R"],
    "Ω",
    "Winding resistance R.",
    Domain::Positive,
);
const ERROR_GAIN: ParamSpec = param(
    "error_gain",
    &[],
    "1/(kp·rad)",
    "Firmware scale from kp·error to duty (or amperes).",
    Domain::Gain,
);
const MAX_PWM: ParamSpec = param(
    "max_pwm",
    &[],
    "1",
    "Largest duty cycle, in (0, 1].",
    Domain::Fraction,
);
const DAMPING: ParamSpec = param(
    "damping",
    &["D"],
    "firmware units",
    "The firmware's derivative gain D.",
    Domain::Gain,
);

fn infinite() -> f32 {
    f32::INFINITY
}

/// `own`'s values, then the friction's: a servo's [`Kind::param_value`].
fn own_then_friction<const N: usize>(own: [f32; N], friction: &BamFriction, k: usize) -> f32 {
    own.get(k)
        .copied()
        .unwrap_or_else(|| friction.values()[k - N])
}

fn example_friction() -> BamFriction {
    <BamFriction as Kind>::example()
}

/// What every servo's `Kind` implementation shares: the planes, the law,
/// the WGSL file, serde.
macro_rules! servo_kind {
    ($cfg:ty, $name:literal, $key:literal, $params:expr, $state:expr) => {
        impl Kind for $cfg {
            const NAME: &'static str = $name;
            const KEY: &'static str = $key;
            const PARAMS: &'static [ParamSpec] = $params;
            const STATE: &'static [StateSpec] = $state;
            const READS: &'static [CommandField] = &[CommandField::Position];
            const INPUTS: &'static [PlaneSpec] = SERVO_INPUTS;
            const OUTPUTS: &'static [PlaneSpec] = SERVO_OUTPUTS;
            const WGSL: &'static str = WGSL;

            fn param_value(&self, k: usize) -> f32 {
                own_then_friction(self.own_values(), &self.friction, k)
            }

            fn from_fields<'de, D: serde::Deserializer<'de>>(fields: D) -> Result<Self, D::Error> {
                <Self as serde::Deserialize>::deserialize(fields)
            }

            fn example() -> Self {
                <$cfg>::example_servo()
            }

            fn group_data(&self) -> Vec<f32> {
                self.data()
            }

            #[inline(always)]
            fn law<I: LawIo>(io: &mut I) -> f32 {
                servo_law::<Self, I>(io)
            }
        }
    };
}

// ---------------------------------------------------------------- voltage

/// A voltage-controlled servo (Dynamixel MX-64, MX-106, XL-320, XL-330):
/// `duty = (q* − q)·kp·error_gain`, clipped first to the current window
/// `[(k_t q̇ − R·I_max)/vin, (k_t q̇ + R·I_max)/vin]` when `max_current` is
/// finite, then to `±max_pwm`; `τ_m = (k_t·vin·duty/R − k_t²·q̇/R)·enable`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BamVoltageCfg {
    /// The firmware gain (the P register: XL-330 400, MX 32).
    pub kp: f32,
    /// Supply voltage (V).
    pub vin: f32,
    /// `k_t` (N·m/A), > 0.
    pub kt: f32,
    /// `R` (Ω), > 0.
    #[serde(alias = "R")]
    pub resistance: f32,
    /// Duty per kp·rad of error.
    pub error_gain: f32,
    /// Largest duty, in (0, 1].
    pub max_pwm: f32,
    /// Current limit of the duty (A); `inf` (the default) for none.
    #[serde(default = "infinite")]
    pub max_current: f32,
    /// The friction budget. Default: none.
    #[serde(default)]
    pub friction: BamFriction,
}

impl BamVoltageCfg {
    /// An MX-64 or MX-106 (15 V, kp 32, error gain 0.158, max duty 0.9625)
    /// with motor constants `kt`, `resistance` and no friction.
    pub fn mx(kt: f32, resistance: f32) -> Self {
        Self::family(15.0, 32.0, 0.158, 0.9625, kt, resistance)
    }

    /// An XL-320 (7.5 V, kp 32, error gain 0.05048199, max duty 1).
    pub fn xl320(kt: f32, resistance: f32) -> Self {
        Self::family(7.5, 32.0, 0.050_481_99, 1.0, kt, resistance)
    }

    /// An XL-330 (7.5 V, kp 400, error gain (4096/2π)/(256·885), max duty 1).
    pub fn xl330(kt: f32, resistance: f32) -> Self {
        let error_gain = (4096.0 / (2.0 * std::f64::consts::PI)) / (256.0 * 885.0);
        Self::family(7.5, 400.0, error_gain as f32, 1.0, kt, resistance)
    }

    fn family(vin: f32, kp: f32, error_gain: f32, max_pwm: f32, kt: f32, resistance: f32) -> Self {
        BamVoltageCfg {
            kp,
            vin,
            kt,
            resistance,
            error_gain,
            max_pwm,
            max_current: f32::INFINITY,
            friction: BamFriction::default(),
        }
    }

    /// The same servo with this friction budget.
    pub fn with_friction(self, friction: BamFriction) -> Self {
        BamVoltageCfg { friction, ..self }
    }

    fn own_values(&self) -> [f32; 7] {
        [
            self.kp,
            self.vin,
            self.kt,
            self.resistance,
            self.error_gain,
            self.max_pwm,
            self.max_current,
        ]
    }

    fn example_servo() -> Self {
        // BAM's shipped XL-330 M6 fit, rounded.
        BamVoltageCfg::xl330(0.366, 2.81).with_friction(example_friction())
    }

    fn data(&self) -> Vec<f32> {
        Vec::new()
    }
}

const VOLTAGE_OWN: [ParamSpec; 7] = [
    KP,
    VIN,
    KT,
    RESISTANCE,
    ERROR_GAIN,
    MAX_PWM,
    param(
        "max_current",
        &[],
        "A",
        "Current limit of the duty; inf for none.",
        Domain::Limit,
    ),
];
const VOLTAGE_PARAMS: [ParamSpec; 7 + FRICTION_COUNT] = concat(&VOLTAGE_OWN, &FRICTION_PARAMS);
servo_kind!(
    BamVoltageCfg,
    "BamVoltage",
    "bam_voltage",
    &VOLTAGE_PARAMS,
    &[]
);

/// The voltage law's duty, `(q* − q)·kp·error_gain` through its two clips.
#[inline(always)]
#[allow(clippy::too_many_arguments, reason = "the firmware's registers")]
pub fn voltage_duty(
    goal: f32,
    q: f32,
    dq: f32,
    kp: f32,
    error_gain: f32,
    vin: f32,
    kt: f32,
    resistance: f32,
    max_current: f32,
    max_pwm: f32,
) -> f32 {
    let mut duty = (goal - q) * kp * error_gain;
    if max_current.is_finite() {
        let lo = (kt * dq - resistance * max_current) / vin;
        let hi = (kt * dq + resistance * max_current) / vin;
        duty = clip(duty, lo, hi);
    }
    clip(duty, -max_pwm, max_pwm)
}

impl Servo for BamVoltageCfg {
    const BENCH_NAME: &'static str = "BamVoltageBench";
    const BENCH_KEY: &'static str = "bam_voltage_bench";
    const BENCH_PARAMS: &'static [ParamSpec] =
        &concat::<_, { 7 + FRICTION_COUNT + 6 }>(&VOLTAGE_PARAMS, &BENCH_PARAMS);
    const BENCH_STATE: &'static [StateSpec] = &BENCH_STATE;

    #[inline(always)]
    fn motor<I: LawIo>(io: &mut I, goal: f32, q: f32, dq: f32, enable: f32) -> (f32, f32) {
        const P: &[ParamSpec] = &VOLTAGE_PARAMS;
        const KP: usize = param_slot(P, "kp");
        const VIN: usize = param_slot(P, "vin");
        const KT: usize = param_slot(P, "kt");
        const R: usize = param_slot(P, "resistance");
        const ERROR_GAIN: usize = param_slot(P, "error_gain");
        const MAX_PWM: usize = param_slot(P, "max_pwm");
        const MAX_CURRENT: usize = param_slot(P, "max_current");
        let (kt, resistance, vin) = (io.param(KT), io.param(R), io.param(VIN));
        let duty = voltage_duty(
            goal,
            q,
            dq,
            io.param(KP),
            io.param(ERROR_GAIN),
            vin,
            kt,
            resistance,
            io.param(MAX_CURRENT),
            io.param(MAX_PWM),
        );
        let volts = vin * duty;
        (volts, dc_motor_torque(kt, resistance, volts, dq) * enable)
    }
}

// ---------------------------------------------------------------- STS3215

/// Feetech's STS3215: the voltage law on a rate-limited target. Each step
/// first moves the smoothed target toward the goal by at most
/// `max_velocity·dt` (`q̃* ← clip(q*, q̃* ± max_velocity·dt)`, state
/// `target_smooth`, reset to 0 rad as BAM's `load_log` resets it), then
/// `duty = clip((q̃* − q)·kp·error_gain·error_gain_ratio, ±max_pwm)` and the
/// DC motor torque.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BamSts3215Cfg {
    /// The firmware gain (default register 32).
    pub kp: f32,
    /// Supply voltage (V; 7.4 for the 7.4 V model).
    pub vin: f32,
    /// `k_t` (N·m/A), > 0.
    pub kt: f32,
    /// `R` (Ω), > 0.
    #[serde(alias = "R")]
    pub resistance: f32,
    /// Duty per kp·rad of error (0.166).
    pub error_gain: f32,
    /// A fitted factor on the error gain (BAM's default 1).
    pub error_gain_ratio: f32,
    /// Largest duty (0.97).
    pub max_pwm: f32,
    /// The target's rate limit (rad/s; BAM's default 3400·2π/4096).
    pub max_velocity: f32,
    /// The step the rate limit is applied over (s).
    pub dt: f32,
    /// The friction budget. Default: none.
    #[serde(default)]
    pub friction: BamFriction,
}

impl BamSts3215Cfg {
    /// BAM's rate limit default (rad/s).
    pub const DEFAULT_MAX_VELOCITY: f32 = (3400.0 * 2.0 * std::f64::consts::PI / 4096.0) as f32;

    /// An STS3215 at 7.4 V with BAM's firmware constants, motor constants
    /// `kt`, `resistance`, physics step `dt` and no friction.
    pub fn new(kt: f32, resistance: f32, dt: f32) -> Self {
        BamSts3215Cfg {
            kp: 32.0,
            vin: 7.4,
            kt,
            resistance,
            error_gain: 0.166,
            error_gain_ratio: 1.0,
            max_pwm: 0.97,
            max_velocity: Self::DEFAULT_MAX_VELOCITY,
            dt,
            friction: BamFriction::default(),
        }
    }

    fn own_values(&self) -> [f32; 9] {
        [
            self.kp,
            self.vin,
            self.kt,
            self.resistance,
            self.error_gain,
            self.error_gain_ratio,
            self.max_pwm,
            self.max_velocity,
            self.dt,
        ]
    }

    fn example_servo() -> Self {
        // BAM's shipped STS3215 M1 fit, rounded.
        BamSts3215Cfg {
            friction: BamFriction {
                friction_base: 0.0524,
                friction_viscous: 0.0591,
                ..BamFriction::default()
            },
            ..BamSts3215Cfg::new(1.21, 2.68, 0.005)
        }
    }

    fn data(&self) -> Vec<f32> {
        Vec::new()
    }
}

const STS_OWN: [ParamSpec; 9] = [
    KP,
    VIN,
    KT,
    RESISTANCE,
    ERROR_GAIN,
    param(
        "error_gain_ratio",
        &[],
        "1",
        "Fitted factor on the error gain.",
        Domain::Positive,
    ),
    MAX_PWM,
    param(
        "max_velocity",
        &[],
        "rad/s",
        "Rate limit of the smoothed target.",
        Domain::Positive,
    ),
    param(
        "dt",
        &[],
        "s",
        "The step the rate limit is applied over.",
        Domain::Positive,
    ),
];
const STS_PARAMS: [ParamSpec; 9 + FRICTION_COUNT] = concat(&STS_OWN, &FRICTION_PARAMS);
const STS_STATE: [StateSpec; 1] = [StateSpec {
    name: "target_smooth",
    unit: "rad",
    doc: "The rate-limited target the firmware tracks.",
    reset: 0.0,
}];
servo_kind!(
    BamSts3215Cfg,
    "BamSts3215",
    "bam_sts3215",
    &STS_PARAMS,
    &STS_STATE
);

impl Servo for BamSts3215Cfg {
    const BENCH_NAME: &'static str = "BamSts3215Bench";
    const BENCH_KEY: &'static str = "bam_sts3215_bench";
    // The servo has its own `dt`: the bench's five others follow.
    const BENCH_PARAMS: &'static [ParamSpec] =
        &concat::<_, { 9 + FRICTION_COUNT + 5 }>(&STS_PARAMS, BENCH_PARAMS.split_at(5).0);
    const BENCH_STATE: &'static [StateSpec] = &concat::<_, 3>(&STS_STATE, &BENCH_STATE);

    #[inline(always)]
    fn motor<I: LawIo>(io: &mut I, goal: f32, q: f32, dq: f32, enable: f32) -> (f32, f32) {
        const P: &[ParamSpec] = &STS_PARAMS;
        const KP: usize = param_slot(P, "kp");
        const VIN: usize = param_slot(P, "vin");
        const KT: usize = param_slot(P, "kt");
        const R: usize = param_slot(P, "resistance");
        const ERROR_GAIN: usize = param_slot(P, "error_gain");
        const RATIO: usize = param_slot(P, "error_gain_ratio");
        const MAX_PWM: usize = param_slot(P, "max_pwm");
        const MAX_VELOCITY: usize = param_slot(P, "max_velocity");
        const DT: usize = param_slot(P, "dt");
        const SMOOTH: usize = state_slot(&STS_STATE, "target_smooth");
        let step = io.param(MAX_VELOCITY) * io.param(DT);
        let previous = io.state(SMOOTH);
        let smooth = clip(goal, previous - step, previous + step);
        io.set_state(SMOOTH, smooth);
        let duty = (smooth - q) * io.param(KP) * io.param(ERROR_GAIN) * io.param(RATIO);
        let max_pwm = io.param(MAX_PWM);
        let volts = io.param(VIN) * clip(duty, -max_pwm, max_pwm);
        (
            volts,
            dc_motor_torque(io.param(KT), io.param(R), volts, dq) * enable,
        )
    }
}

// ---------------------------------------------------------------- current

/// A current-controlled servo: the commanded current
/// `I = (q* − q)·kp·error_gain`, clipped to the back-EMF window
/// `[(−vin − k_t q̇)/R, (vin − k_t q̇)/R]`, then to `±current_limit`.
/// The generic law applies `τ_m = k_t·I·enable`; with `bus_current` (BAM's
/// `xl330i`, which its authors mark untested) the firmware regulates the
/// bus current instead: with `s = sign(I)`,
/// `duty = clip((k_t q̇ + s·√((k_t q̇)² + 4·vin·R·|I|))/(2·vin), ±1)` and
/// `τ_m = k_t·(duty·vin − k_t q̇)/R·enable` (so a zero command still brakes
/// with `−k_t²q̇/(2R)`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BamCurrentCfg {
    /// The firmware gain.
    pub kp: f32,
    /// Supply voltage (V).
    pub vin: f32,
    /// `k_t` (N·m/A), > 0.
    pub kt: f32,
    /// `R` (Ω), > 0.
    #[serde(alias = "R")]
    pub resistance: f32,
    /// Amperes per kp·rad of error (0.01 for the XL-330).
    pub error_gain: f32,
    /// The current limit (A; fitted, BAM's default 1.5).
    pub current_limit: f32,
    /// The XL-330's bus-current regulation rather than the generic law.
    #[serde(default)]
    pub bus_current: bool,
    /// The friction budget. Default: none.
    #[serde(default)]
    pub friction: BamFriction,
}

impl BamCurrentCfg {
    /// BAM's `xl330i`: an XL-330 in current mode (7.5 V, kp 400, 0.01 A
    /// per kp·rad, bus-current regulation) with motor constants `kt`,
    /// `resistance`, a 1.5 A limit and no friction.
    pub fn xl330(kt: f32, resistance: f32) -> Self {
        BamCurrentCfg {
            kp: 400.0,
            vin: 7.5,
            kt,
            resistance,
            error_gain: 0.01,
            current_limit: 1.5,
            bus_current: true,
            friction: BamFriction::default(),
        }
    }

    fn own_values(&self) -> [f32; 6] {
        [
            self.kp,
            self.vin,
            self.kt,
            self.resistance,
            self.error_gain,
            self.current_limit,
        ]
    }

    fn example_servo() -> Self {
        BamCurrentCfg::xl330(0.61, 3.28).with_friction(example_friction())
    }

    /// The same servo with this friction budget.
    pub fn with_friction(self, friction: BamFriction) -> Self {
        BamCurrentCfg { friction, ..self }
    }

    /// `[1]` for bus-current regulation, `[0]` for the generic law.
    fn data(&self) -> Vec<f32> {
        vec![f32::from(u8::from(self.bus_current))]
    }
}

const CURRENT_OWN: [ParamSpec; 6] = [
    KP,
    VIN,
    KT,
    RESISTANCE,
    ERROR_GAIN,
    param(
        "current_limit",
        &[],
        "A",
        "The commanded current's limit.",
        Domain::Limit,
    ),
];
const CURRENT_PARAMS: [ParamSpec; 6 + FRICTION_COUNT] = concat(&CURRENT_OWN, &FRICTION_PARAMS);
servo_kind!(
    BamCurrentCfg,
    "BamCurrent",
    "bam_current",
    &CURRENT_PARAMS,
    &[]
);

/// The commanded current: `(q* − q)·kp·error_gain` through the back-EMF
/// window, then `±current_limit`.
#[inline(always)]
#[allow(clippy::too_many_arguments, reason = "the firmware's registers")]
pub fn current_command(
    goal: f32,
    q: f32,
    dq: f32,
    kp: f32,
    error_gain: f32,
    vin: f32,
    kt: f32,
    resistance: f32,
    current_limit: f32,
) -> f32 {
    let current = (goal - q) * kp * error_gain;
    let hi = 1.0 / resistance * (vin - kt * dq);
    let lo = 1.0 / resistance * (-vin - kt * dq);
    let current = clip(current, lo, hi);
    clip(current, -current_limit, current_limit)
}

/// The XL-330's bus-current law: τ_m for commanded current `current`
/// (before the enable).
#[inline(always)]
pub fn xl330_bus_torque(current: f32, dq: f32, vin: f32, kt: f32, resistance: f32) -> f32 {
    let s = if current > 0.0 {
        1.0
    } else if current < 0.0 {
        -1.0
    } else {
        0.0
    };
    let emf = kt * dq;
    let disc = emf * emf + 4.0 * vin * resistance * current.abs();
    let duty = clip((emf + s * disc.sqrt()) / (2.0 * vin), -1.0, 1.0);
    let phase = (duty * vin - emf) / resistance;
    kt * phase
}

impl Servo for BamCurrentCfg {
    const BENCH_NAME: &'static str = "BamCurrentBench";
    const BENCH_KEY: &'static str = "bam_current_bench";
    const BENCH_PARAMS: &'static [ParamSpec] =
        &concat::<_, { 6 + FRICTION_COUNT + 6 }>(&CURRENT_PARAMS, &BENCH_PARAMS);
    const BENCH_STATE: &'static [StateSpec] = &BENCH_STATE;

    #[inline(always)]
    fn motor<I: LawIo>(io: &mut I, goal: f32, q: f32, dq: f32, enable: f32) -> (f32, f32) {
        const P: &[ParamSpec] = &CURRENT_PARAMS;
        const KP: usize = param_slot(P, "kp");
        const VIN: usize = param_slot(P, "vin");
        const KT: usize = param_slot(P, "kt");
        const R: usize = param_slot(P, "resistance");
        const ERROR_GAIN: usize = param_slot(P, "error_gain");
        const LIMIT: usize = param_slot(P, "current_limit");
        let (kt, resistance, vin) = (io.param(KT), io.param(R), io.param(VIN));
        let current = current_command(
            goal,
            q,
            dq,
            io.param(KP),
            io.param(ERROR_GAIN),
            vin,
            kt,
            resistance,
            io.param(LIMIT),
        );
        let tau = if io.data_at::<0>() != 0.0 {
            xl330_bus_torque(current, dq, vin, kt, resistance)
        } else {
            kt * current
        };
        (current, tau * enable)
    }
}

// ---------------------------------------------------------------- eRob

/// An eRob (ZeroErr) actuator: `I = clip((q* − q)·kp + D·√kp·(0 − q̇),
/// ±max_amps)`, `τ = k_t·I·enable`, then clipped to the back-EMF window
/// `[−k_t·max_volts/R − k_t²q̇/R, k_t·max_volts/R − k_t²q̇/R]` — after the
/// enable, so a disabled eRob still brakes above `max_volts/k_t`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BamErobCfg {
    /// The firmware gain (from the log: there is no default).
    pub kp: f32,
    /// `k_t` (N·m/A), > 0.
    pub kt: f32,
    /// `R` (Ω), > 0 (BAM's default 2 for the eRob80:100, whose fits lack it).
    #[serde(alias = "R")]
    pub resistance: f32,
    /// `D` (2 for the eRob80:100, 1 for the eRob80:50).
    pub damping: f32,
    /// The current limit (A; 12).
    #[serde(default = "BamErobCfg::default_max_amps")]
    pub max_amps: f32,
    /// The bus voltage (V; 48).
    #[serde(default = "BamErobCfg::default_max_volts")]
    pub max_volts: f32,
    /// The friction budget. Default: none.
    #[serde(default)]
    pub friction: BamFriction,
}

impl BamErobCfg {
    fn default_max_amps() -> f32 {
        12.0
    }

    fn default_max_volts() -> f32 {
        48.0
    }

    /// An eRob with gain `kp`, derivative gain `damping`, motor constants
    /// `kt`, `resistance`, 12 A, 48 V and no friction.
    pub fn new(kp: f32, damping: f32, kt: f32, resistance: f32) -> Self {
        BamErobCfg {
            kp,
            kt,
            resistance,
            damping,
            max_amps: 12.0,
            max_volts: 48.0,
            friction: BamFriction::default(),
        }
    }

    fn own_values(&self) -> [f32; 6] {
        [
            self.kp,
            self.kt,
            self.resistance,
            self.damping,
            self.max_amps,
            self.max_volts,
        ]
    }

    fn example_servo() -> Self {
        // BAM's shipped eRob80:50 M1 fit, rounded.
        BamErobCfg {
            friction: BamFriction {
                friction_base: 4.1,
                friction_viscous: 1.3,
                ..BamFriction::default()
            },
            ..BamErobCfg::new(10.0, 1.0, 4.54, 2.51)
        }
    }

    fn data(&self) -> Vec<f32> {
        Vec::new()
    }
}

const EROB_OWN: [ParamSpec; 6] = [
    KP,
    KT,
    RESISTANCE,
    DAMPING,
    param("max_amps", &[], "A", "The current limit.", Domain::Limit),
    param("max_volts", &[], "V", "The bus voltage.", Domain::Positive),
];
const EROB_PARAMS: [ParamSpec; 6 + FRICTION_COUNT] = concat(&EROB_OWN, &FRICTION_PARAMS);
servo_kind!(BamErobCfg, "BamErob", "bam_erob", &EROB_PARAMS, &[]);

impl Servo for BamErobCfg {
    const BENCH_NAME: &'static str = "BamErobBench";
    const BENCH_KEY: &'static str = "bam_erob_bench";
    const BENCH_PARAMS: &'static [ParamSpec] =
        &concat::<_, { 6 + FRICTION_COUNT + 6 }>(&EROB_PARAMS, &BENCH_PARAMS);
    const BENCH_STATE: &'static [StateSpec] = &BENCH_STATE;

    #[inline(always)]
    fn motor<I: LawIo>(io: &mut I, goal: f32, q: f32, dq: f32, enable: f32) -> (f32, f32) {
        const P: &[ParamSpec] = &EROB_PARAMS;
        const KP: usize = param_slot(P, "kp");
        const KT: usize = param_slot(P, "kt");
        const R: usize = param_slot(P, "resistance");
        const D: usize = param_slot(P, "damping");
        const MAX_AMPS: usize = param_slot(P, "max_amps");
        const MAX_VOLTS: usize = param_slot(P, "max_volts");
        let (kp, kt, resistance) = (io.param(KP), io.param(KT), io.param(R));
        let amps = (goal - q) * kp + io.param(D) * kp.sqrt() * (0.0 - dq);
        let max_amps = io.param(MAX_AMPS);
        let amps = clip(amps, -max_amps, max_amps);
        let tau = kt * (amps * enable);
        let bound = kt / resistance * io.param(MAX_VOLTS);
        let emf = kt * kt * dq / resistance;
        (amps, clip(tau, -bound - emf, bound - emf))
    }
}

// ---------------------------------------------------------------- Go1

/// Unitree's Go1 actuator as BAM models it:
/// `τ_m = clip((q* − q)·kp·ratio + D·(0 − q̇), ±max_torque)·enable`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BamGo1Cfg {
    /// The position gain (from the log: there is no default).
    pub kp: f32,
    /// A fitted factor on the gain (BAM's default 1).
    pub ratio: f32,
    /// `D` (N·m·s/rad; 0.3).
    pub damping: f32,
    /// The torque limit (N·m; BAM's default 23.7).
    pub max_torque: f32,
    /// The friction budget. Default: none.
    #[serde(default)]
    pub friction: BamFriction,
}

impl BamGo1Cfg {
    /// A Go1 actuator with gain `kp` and BAM's defaults (ratio 1, D 0.3,
    /// 23.7 N·m) and no friction.
    pub fn new(kp: f32) -> Self {
        BamGo1Cfg {
            kp,
            ratio: 1.0,
            damping: 0.3,
            max_torque: 23.7,
            friction: BamFriction::default(),
        }
    }

    fn own_values(&self) -> [f32; 4] {
        [self.kp, self.ratio, self.damping, self.max_torque]
    }

    fn example_servo() -> Self {
        BamGo1Cfg {
            friction: BamFriction {
                friction_base: 0.5,
                friction_viscous: 0.2,
                ..BamFriction::default()
            },
            ..BamGo1Cfg::new(20.0)
        }
    }

    fn data(&self) -> Vec<f32> {
        Vec::new()
    }
}

const GO1_OWN: [ParamSpec; 4] = [
    KP,
    param(
        "ratio",
        &[],
        "1",
        "Fitted factor on the gain.",
        Domain::Positive,
    ),
    DAMPING,
    param("max_torque", &[], "N·m", "The torque limit.", Domain::Limit),
];
const GO1_PARAMS: [ParamSpec; 4 + FRICTION_COUNT] = concat(&GO1_OWN, &FRICTION_PARAMS);
servo_kind!(BamGo1Cfg, "BamGo1", "bam_go1", &GO1_PARAMS, &[]);

impl Servo for BamGo1Cfg {
    const BENCH_NAME: &'static str = "BamGo1Bench";
    const BENCH_KEY: &'static str = "bam_go1_bench";
    const BENCH_PARAMS: &'static [ParamSpec] =
        &concat::<_, { 4 + FRICTION_COUNT + 6 }>(&GO1_PARAMS, &BENCH_PARAMS);
    const BENCH_STATE: &'static [StateSpec] = &BENCH_STATE;

    #[inline(always)]
    fn motor<I: LawIo>(io: &mut I, goal: f32, q: f32, dq: f32, enable: f32) -> (f32, f32) {
        const P: &[ParamSpec] = &GO1_PARAMS;
        const KP: usize = param_slot(P, "kp");
        const RATIO: usize = param_slot(P, "ratio");
        const D: usize = param_slot(P, "damping");
        const MAX_TORQUE: usize = param_slot(P, "max_torque");
        let mut tau = (goal - q) * io.param(KP) * io.param(RATIO);
        tau += io.param(D) * (0.0 - dq);
        let max_torque = io.param(MAX_TORQUE);
        let command = clip(tau, -max_torque, max_torque);
        (command, command * enable)
    }
}
