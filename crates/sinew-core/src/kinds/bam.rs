//! BAM's servo models (Rhoban's "Better Actuator Models", Duclusaud et al.,
//! ICRA 2025): the firmware control law and DC-motor torque of Dynamixel,
//! Feetech, eRob and Unitree servos, and the M1–M6 friction budget, as
//! kinds. `../shared/reference/actuator-math.md` Part 3 has the math; each
//! formula here follows BAM's operation order (`bam/actuator.py`, the
//! vendor files and `Model.compute_frictions`), in `f32`.
//!
//! Every servo kind reads the position target (the goal), `q` and `q̇`, and
//! two input planes: `torque_enable` (1 when never set; BAM multiplies the
//! torque by it, so give 0 or 1) and `external_torque` (τ_e, what the
//! simulator's other forces put on the joint: gravity, contacts, coupling;
//! read only by the friction budget). Its ctrl column is the motor torque
//! τ_m, to apply as a `<motor>` with gear 1; it writes two output planes,
//! `frictionloss` (F_s, N·m) and `damping` (K_v, N·m·s/rad), for the
//! simulator's `dof_frictionloss` and `dof_damping`, as BAM's MuJoCo
//! controller sets them. Unlike that controller, which computes them from
//! the previous step's torques, Sinew computes them from this step's τ_m and
//! the τ_e given for this step. The control law sees the raw `q`; BAM's
//! encoder offset `q_offset` only moves where a testbench evaluates gravity
//! ([`BamPreset::q_offset`]), and the rotor inertia is the group's
//! `armature` ([`GroupCfg::armature`](crate::GroupCfg::armature)).

use super::ideal_pd::clip;
use super::spec::{param_slot, Domain, Kind, LawIo, ParamSpec, PlaneSpec, StateSpec};
use super::CommandField;

/// The input plane a servo reads its torque enable from.
pub const TORQUE_ENABLE: PlaneSpec = PlaneSpec {
    name: "torque_enable",
    unit: "0 or 1",
    doc: "The servo's torque enable: the motor torque is multiplied by it.",
    default: 1.0,
};

/// The input plane of the torque the simulator's other forces put on a joint.
pub const EXTERNAL_TORQUE: PlaneSpec = PlaneSpec {
    name: "external_torque",
    unit: "N·m",
    doc: "τ_e: the torque on the joint besides the motor's and the friction's \
          (gravity, contacts, coupling), read by load-dependent friction.",
    default: 0.0,
};

/// The output plane of the friction budget's static part.
pub const FRICTIONLOSS: PlaneSpec = PlaneSpec {
    name: "frictionloss",
    unit: "N·m",
    doc: "F_s: the dry friction to set as the joint's frictionloss.",
    default: 0.0,
};

/// The output plane of the friction budget's viscous coefficient.
pub const DAMPING_OUT: PlaneSpec = PlaneSpec {
    name: "damping",
    unit: "N·m·s/rad",
    doc: "K_v: the viscous friction to set as the joint's damping.",
    default: 0.0,
};

/// Every servo kind's input planes, in this order.
const SERVO_INPUTS: &[PlaneSpec] = &[TORQUE_ENABLE, EXTERNAL_TORQUE];
/// Every servo kind's output planes, in this order.
const SERVO_OUTPUTS: &[PlaneSpec] = &[FRICTIONLOSS, DAMPING_OUT];
const IN_ENABLE: usize = 0;
const IN_EXTERNAL: usize = 1;
const OUT_FRICTIONLOSS: usize = 0;
const OUT_DAMPING: usize = 1;

const fn param(
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

/// The M1–M6 friction budget's coefficients (BAM's parameter names), the
/// last 13 parameters of every servo kind.
///
/// `F_s = K_c + K_l·|τ_e − τ_m| + |K_e·τ_e − K_m·τ_m| +
/// s·(K_cs + K_ls·|τ_e − τ_m| + |K_es·τ_e − K_ms·τ_m| + Q)`, with the Stribeck factor
/// `s = exp(−|q̇/θ̇_s|^α)` and M6's quadratic term `Q = K_eq·τ_e²` when
/// `|τ_e| < |τ_m|`, `K_mq·τ_m²` when `|τ_e| > |τ_m|`, 0 on a tie, counted
/// only when `sign(τ_e) ≠ sign(τ_m)` (sign(0) = 0), as BAM's
/// `Model.compute_frictions` does (BAM's mjlab port has neither the gate nor
/// the tie rule). Each model is this formula with the coefficients it does
/// not fit at 0: M1 `K_c`; M2 adds `K_cs`; M3 `K_c`, `K_l`; M4 adds `K_cs`,
/// `K_ls`; M5 `K_c`, `K_e`, `K_m`, `K_cs`, `K_es`, `K_ms`; M6 adds `K_eq`,
/// `K_mq`. Zero terms add exactly 0, so each model's value is BAM's. `K_v`
/// is returned as the damping.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BamFriction {
    /// `K_c` (N·m). Default 0.
    pub friction_base: f32,
    /// `K_v` (N·m·s/rad). Default 0.
    pub friction_viscous: f32,
    /// `K_cs` (N·m). Default 0.
    pub friction_stribeck: f32,
    /// `θ̇_s` (rad/s), > 0. Default 1.
    pub dtheta_stribeck: f32,
    /// `α`, > 0. Default 1.
    pub alpha: f32,
    /// `K_l` (M3, M4). Default 0.
    pub load_friction_base: f32,
    /// `K_ls` (M4). Default 0.
    pub load_friction_stribeck: f32,
    /// `K_m` (M5, M6). Default 0.
    pub load_friction_motor: f32,
    /// `K_e` (M5, M6). Default 0.
    pub load_friction_external: f32,
    /// `K_ms` (M5, M6). Default 0.
    pub load_friction_motor_stribeck: f32,
    /// `K_es` (M5, M6). Default 0.
    pub load_friction_external_stribeck: f32,
    /// `K_mq` (M6, 1/N·m). Default 0.
    pub load_friction_motor_quad: f32,
    /// `K_eq` (M6, 1/N·m). Default 0.
    pub load_friction_external_quad: f32,
}

impl Default for BamFriction {
    fn default() -> Self {
        BamFriction {
            friction_base: 0.0,
            friction_viscous: 0.0,
            friction_stribeck: 0.0,
            dtheta_stribeck: 1.0,
            alpha: 1.0,
            load_friction_base: 0.0,
            load_friction_stribeck: 0.0,
            load_friction_motor: 0.0,
            load_friction_external: 0.0,
            load_friction_motor_stribeck: 0.0,
            load_friction_external_stribeck: 0.0,
            load_friction_motor_quad: 0.0,
            load_friction_external_quad: 0.0,
        }
    }
}

const FRICTION_COUNT: usize = 13;

/// The friction coefficients' specs, in [`BamFriction::values`] order.
pub const FRICTION_PARAMS: [ParamSpec; FRICTION_COUNT] = {
    use Domain::{NonNegative as Nn, Positive as Pos};
    [
        param(
            "friction_base",
            &["K_c"],
            "N·m",
            "Coulomb friction K_c.",
            Nn,
        ),
        param(
            "friction_viscous",
            &["K_v"],
            "N·m·s/rad",
            "Viscous friction K_v.",
            Nn,
        ),
        param(
            "friction_stribeck",
            &["K_cs"],
            "N·m",
            "Stribeck friction K_cs.",
            Nn,
        ),
        param(
            "dtheta_stribeck",
            &[],
            "rad/s",
            "Stribeck velocity θ̇_s.",
            Pos,
        ),
        param("alpha", &[], "1", "Stribeck exponent α.", Pos),
        param(
            "load_friction_base",
            &["K_l"],
            "1",
            "Load friction K_l (M3, M4).",
            Nn,
        ),
        param(
            "load_friction_stribeck",
            &["K_ls"],
            "1",
            "Stribeck load friction K_ls (M4).",
            Nn,
        ),
        param(
            "load_friction_motor",
            &["K_m"],
            "1",
            "Motor-side load friction K_m.",
            Nn,
        ),
        param(
            "load_friction_external",
            &["K_e"],
            "1",
            "External-side load friction K_e.",
            Nn,
        ),
        param(
            "load_friction_motor_stribeck",
            &["K_ms"],
            "1",
            "Motor-side Stribeck load friction K_ms.",
            Nn,
        ),
        param(
            "load_friction_external_stribeck",
            &["K_es"],
            "1",
            "External-side Stribeck load friction K_es.",
            Nn,
        ),
        param(
            "load_friction_motor_quad",
            &["K_mq"],
            "1/(N·m)",
            "Motor-side quadratic friction K_mq (M6).",
            Nn,
        ),
        param(
            "load_friction_external_quad",
            &["K_eq"],
            "1/(N·m)",
            "External-side quadratic friction K_eq (M6).",
            Nn,
        ),
    ]
};

impl BamFriction {
    /// The coefficients in [`FRICTION_PARAMS`] order.
    pub fn values(&self) -> [f32; FRICTION_COUNT] {
        [
            self.friction_base,
            self.friction_viscous,
            self.friction_stribeck,
            self.dtheta_stribeck,
            self.alpha,
            self.load_friction_base,
            self.load_friction_stribeck,
            self.load_friction_motor,
            self.load_friction_external,
            self.load_friction_motor_stribeck,
            self.load_friction_external_stribeck,
            self.load_friction_motor_quad,
            self.load_friction_external_quad,
        ]
    }

    /// `(F_s, K_v)` for these coefficients (see [`bam_friction`]).
    pub fn budget(&self, tau_m: f32, tau_e: f32, dq: f32) -> (f32, f32) {
        let v = self.values();
        bam_friction(|k| v[k], tau_m, tau_e, dq)
    }
}

/// numpy's `sign`: −1, 0 or 1 (a zero keeps its sign, which compares equal).
#[inline(always)]
fn sign(x: f32) -> f32 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        x
    }
}

/// The friction budget `(F_s, K_v)` from the motor torque, the external
/// torque and the joint velocity, `p(k)` the `k`-th coefficient in
/// [`FRICTION_PARAMS`] order (twin of `bam_friction` in `shaders/bam.wgsl`).
#[inline(always)]
pub fn bam_friction(p: impl Fn(usize) -> f32, tau_m: f32, tau_e: f32, dq: f32) -> (f32, f32) {
    let load = (tau_e - tau_m).abs();
    let directional = (tau_e * p(8) - tau_m * p(7)).abs();
    let directional_stribeck = (tau_e * p(10) - tau_m * p(9)).abs();
    let x = (dq / p(3)).abs();
    let s = (-(if x == 0.0 { 0.0 } else { x.powf(p(4)) })).exp();
    let (ae, am) = (tau_e.abs(), tau_m.abs());
    let quad = if ae < am {
        p(12) * (ae * ae)
    } else if ae > am {
        p(11) * (am * am)
    } else {
        0.0
    };
    let gate = if sign(tau_e) != sign(tau_m) { 1.0 } else { 0.0 };
    let mut fs = p(0);
    fs += p(5) * load;
    fs += directional;
    fs += s * p(2);
    fs += p(6) * load * s;
    fs += directional_stribeck * s;
    fs += s * quad * gate;
    (fs, p(1))
}

/// `own`'s parameters, then the friction coefficients.
const fn with_friction<const N: usize, const M: usize>(own: [ParamSpec; N]) -> [ParamSpec; M] {
    assert!(M == N + FRICTION_COUNT);
    let mut out = [FRICTION_PARAMS[0]; M];
    let mut i = 0;
    while i < M {
        out[i] = if i < N {
            own[i]
        } else {
            FRICTION_PARAMS[i - N]
        };
        i += 1;
    }
    out
}

/// Writes a servo's friction outputs for motor torque `tau_m`, the
/// coefficients starting at parameter slot `first`.
#[inline(always)]
fn write_friction<I: LawIo>(io: &mut I, first: usize, tau_m: f32) {
    let (fs, kv) = bam_friction(
        |k| io.param(first + k),
        tau_m,
        io.input(IN_EXTERNAL),
        io.vel(),
    );
    io.set_output(OUT_FRICTIONLOSS, fs);
    io.set_output(OUT_DAMPING, kv);
}

/// The DC motor torque of a voltage-driven servo: `k_t·V/R − k_t²·q̇/R`.
#[inline(always)]
pub fn dc_motor_torque(kt: f32, resistance: f32, volts: f32, dq: f32) -> f32 {
    let mut tau = kt * volts / resistance;
    tau -= kt * kt * dq / resistance;
    tau
}

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

// ---------------------------------------------------------------- voltage

/// A voltage-controlled servo (Dynamixel MX-64, MX-106, XL-320, XL-330):
/// `duty = (q* − q)·kp·error_gain`, clipped first to the current window
/// `[(k_t q̇ − R·I_max)/vin, (k_t q̇ + R·I_max)/vin]` when `max_current` is
/// finite, then to `±max_pwm`; `τ_m = (k_t·vin·duty/R − k_t²·q̇/R)·enable`.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
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

fn infinite() -> f32 {
    f32::INFINITY
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
}

const VOLTAGE_PARAMS: [ParamSpec; 7 + FRICTION_COUNT] = with_friction([
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
]);

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

impl Kind for BamVoltageCfg {
    const NAME: &'static str = "BamVoltage";
    const KEY: &'static str = "bam_voltage";
    const PARAMS: &'static [ParamSpec] = &VOLTAGE_PARAMS;
    const STATE: &'static [StateSpec] = &[];
    const READS: &'static [CommandField] = &[CommandField::Position];
    const INPUTS: &'static [PlaneSpec] = SERVO_INPUTS;
    const OUTPUTS: &'static [PlaneSpec] = SERVO_OUTPUTS;
    const WGSL: &'static str = include_str!("../../../../shaders/bam.wgsl");

    fn param_value(&self, k: usize) -> f32 {
        let own = [
            self.kp,
            self.vin,
            self.kt,
            self.resistance,
            self.error_gain,
            self.max_pwm,
            self.max_current,
        ];
        own.get(k)
            .copied()
            .unwrap_or_else(|| self.friction.values()[k - own.len()])
    }

    fn from_fields<'de, D: serde::Deserializer<'de>>(fields: D) -> Result<Self, D::Error> {
        <Self as serde::Deserialize>::deserialize(fields)
    }

    fn example() -> Self {
        // BAM's shipped XL-330 M6 fit, rounded.
        BamVoltageCfg::xl330(0.366, 2.81).with_friction(example_friction())
    }

    #[inline(always)]
    fn law<I: LawIo>(io: &mut I) -> f32 {
        const P: &[ParamSpec] = BamVoltageCfg::PARAMS;
        const KP: usize = param_slot(P, "kp");
        const VIN: usize = param_slot(P, "vin");
        const KT: usize = param_slot(P, "kt");
        const R: usize = param_slot(P, "resistance");
        const ERROR_GAIN: usize = param_slot(P, "error_gain");
        const MAX_PWM: usize = param_slot(P, "max_pwm");
        const MAX_CURRENT: usize = param_slot(P, "max_current");
        let (kt, resistance, vin, dq) = (io.param(KT), io.param(R), io.param(VIN), io.vel());
        let duty = voltage_duty(
            io.target(CommandField::Position),
            io.pos(),
            dq,
            io.param(KP),
            io.param(ERROR_GAIN),
            vin,
            kt,
            resistance,
            io.param(MAX_CURRENT),
            io.param(MAX_PWM),
        );
        let tau = dc_motor_torque(kt, resistance, vin * duty, dq) * io.input(IN_ENABLE);
        write_friction(io, P.len() - FRICTION_COUNT, tau);
        tau
    }
}

/// An M6 budget of the size BAM fits for an XL-330.
fn example_friction() -> BamFriction {
    BamFriction {
        friction_base: 0.0048,
        friction_viscous: 0.0054,
        friction_stribeck: 0.0047,
        dtheta_stribeck: 2.89,
        alpha: 8.68,
        load_friction_motor: 0.267,
        load_friction_external_stribeck: 0.0808,
        load_friction_motor_quad: 0.00997,
        load_friction_external_quad: 0.0049,
        ..BamFriction::default()
    }
}
