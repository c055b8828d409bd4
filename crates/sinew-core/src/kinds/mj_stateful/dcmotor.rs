//! MuJoCo 4's `<dcmotor>` (Part 5.5 of the reference).

use super::*;
use crate::math::{exp, sin};

/// MuJoCo 4's `<dcmotor>` from its compiled parameters (Part 5.5): a DC
/// motor with back-EMF, an optional torque-space controller (`kp`, `ki`,
/// `kd` on the pos/vel/ff controls, back-EMF compensated with the nominal
/// `R`, clipped to `vmax`, plus the raw `voltage` control), slew on the
/// first control, an anti-windup integral clamped to `±imax`, inductance
/// (the `current` slot, exponential, rate-limited to `didt_max`), a thermal
/// model (`R_T = R·(1 + α(ΔT + T_a − T0))`, the `temperature` slot), the
/// saturation clamp `force_range`, then cogging `A·sin(N_p·L + φ)` and LuGre
/// friction (the `bristle` slot, exact zero-order hold) after it. `actearly`
/// is always on: with inductance the force is `K·i_next`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MjDcMotorCfg {
    /// Which controls it has (`input`, default `voltage`).
    #[serde(default = "voltage_only", with = "inputs_text", alias = "input")]
    pub inputs: CtrlInputs,
    /// Nominal winding resistance `R` (Ω), > 0.
    pub resistance: f32,
    /// Motor constant `K` (N·m/A = V·s/rad), ≥ 0.
    pub motorconst: f32,
    /// Resistance temperature coefficient `α` (1/K).
    #[serde(default)]
    pub alpha: f32,
    /// Reference temperature `T0` (°C).
    #[serde(default)]
    pub t0: f32,
    /// Controller `kp` (N·m/rad).
    #[serde(default)]
    pub kp: f32,
    /// Controller `ki` (N·m/(rad·s)); > 0 adds the integral slot.
    #[serde(default)]
    pub ki: f32,
    /// Controller `kd` (N·m·s/rad).
    #[serde(default)]
    pub kd: f32,
    /// Controller voltage limit (V); ≤ 0 is off.
    #[serde(default)]
    pub vmax: f32,
    /// Electrical time constant `t_e = L/R` (s); > 0 adds the current slot.
    #[serde(default)]
    pub te: f32,
    /// Current rate limit (A/s); ≤ 0 is off.
    #[serde(default)]
    pub didt_max: f32,
    /// Thermal resistance `R_T,th` (K/W); > 0 adds the temperature slot.
    #[serde(default)]
    pub thermal_resistance: f32,
    /// Thermal capacitance `C` (J/K), > 0 with a thermal model.
    #[serde(default)]
    pub thermal_capacitance: f32,
    /// Ambient temperature `T_a` (°C).
    #[serde(default)]
    pub ambient: f32,
    /// LuGre bristle stiffness `σ0` (N·m/rad); > 0 adds the bristle slot.
    #[serde(default)]
    pub sigma0: f32,
    /// LuGre bristle damping `σ1` (N·m·s/rad).
    #[serde(default)]
    pub sigma1: f32,
    /// Rate limit of the first control; ≤ 0 is off.
    #[serde(default)]
    pub slewmax: f32,
    /// The integral's clamp and anti-windup limit (rad·s); ≤ 0 is off.
    #[serde(default)]
    pub imax: f32,
    /// Cogging amplitude `A` (N·m).
    #[serde(default)]
    pub cogging_amplitude: f32,
    /// Cogging pole count `N_p`.
    #[serde(default)]
    pub cogging_poles: f32,
    /// Cogging phase `φ` (rad).
    #[serde(default)]
    pub cogging_phase: f32,
    /// LuGre Coulomb torque `τ_C` (N·m).
    #[serde(default)]
    pub tau_c: f32,
    /// LuGre static torque `τ_S` (N·m).
    #[serde(default)]
    pub tau_s: f32,
    /// LuGre Stribeck velocity `ω_S` (rad/s).
    #[serde(default)]
    pub omega_s: f32,
    /// The gear.
    #[serde(default = "one")]
    pub gear: f32,
    /// The saturation clamp of `f` (±τ_max; ±inf where unlimited).
    #[serde(default = "unlimited")]
    pub force_range: [f32; 2],
    /// The range every control is clamped to (`ctrlrange`, broadcast).
    #[serde(default = "unlimited")]
    pub ctrl_range: [f32; 2],
    /// MuJoCo's timestep `h` (s).
    pub timestep: f32,
    /// The bias of a `<general>` form with dcmotor dynamics and gain
    /// (`biastype`): MuJoCo's dcmotor bias (what `<dcmotor>` compiles to),
    /// none, or affine. Fixed per group. Scenario files call it `bias`
    /// (`bias_type` is `mj_general`'s, with MuJoCo's other bias types).
    #[serde(default, rename = "bias")]
    pub bias_type: DcMotorBias,
    /// `biasprm[0..3]` of an affine bias: `b0 + b1·L + b2·V` is added to
    /// the force before the saturation clamp. Fixed per group.
    #[serde(default)]
    pub affine_bias: [f32; 3],
}

/// The bias of an [`MjDcMotorCfg`] (MuJoCo's `biastype` beside a dcmotor
/// gain and dynamics).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DcMotorBias {
    /// The back-EMF `−(K²/R_T)·V` of a motor without inductance, then the
    /// cogging and LuGre torques after the saturation clamp.
    #[default]
    DcMotor,
    /// No bias: neither back-EMF nor cogging nor LuGre in the force.
    None,
    /// [`MjDcMotorCfg::affine_bias`] before the clamp; no back-EMF, cogging
    /// or LuGre in the force.
    Affine,
}

impl MjDcMotorCfg {
    /// A voltage-driven motor of resistance `R` and motor constant `K`,
    /// nothing else on.
    pub fn new(resistance: f32, motorconst: f32, timestep: f32) -> Self {
        MjDcMotorCfg {
            inputs: voltage_only(),
            resistance,
            motorconst,
            alpha: 0.0,
            t0: 0.0,
            kp: 0.0,
            ki: 0.0,
            kd: 0.0,
            vmax: 0.0,
            te: 0.0,
            didt_max: 0.0,
            thermal_resistance: 0.0,
            thermal_capacitance: 0.0,
            ambient: 0.0,
            sigma0: 0.0,
            sigma1: 0.0,
            slewmax: 0.0,
            imax: 0.0,
            cogging_amplitude: 0.0,
            cogging_poles: 0.0,
            cogging_phase: 0.0,
            tau_c: 0.0,
            tau_s: 0.0,
            omega_s: 0.0,
            gear: 1.0,
            force_range: unlimited(),
            ctrl_range: unlimited(),
            timestep,
            bias_type: DcMotorBias::DcMotor,
            affine_bias: [0.0; 3],
        }
    }

    /// From MuJoCo's compiled arrays (Part 5.2): `gainprm = [R, K, α, T0, kp,
    /// ki, kd, Vmax]`, `dynprm = [t_e, (di/dt)max, R_T, C, T_a, σ0, σ1,
    /// slewmax, Imax]`, `biasprm = [A, N_p, φ, τ_C, τ_S, ω_S]`.
    pub fn from_compiled(
        inputs: CtrlInputs,
        gainprm: &[f64],
        dynprm: &[f64],
        biasprm: &[f64],
        timestep: f32,
    ) -> Self {
        let at = |v: &[f64], k: usize| v.get(k).copied().unwrap_or(0.0) as f32;
        MjDcMotorCfg {
            inputs,
            resistance: at(gainprm, 0),
            motorconst: at(gainprm, 1),
            alpha: at(gainprm, 2),
            t0: at(gainprm, 3),
            kp: at(gainprm, 4),
            ki: at(gainprm, 5),
            kd: at(gainprm, 6),
            vmax: at(gainprm, 7),
            te: at(dynprm, 0),
            didt_max: at(dynprm, 1),
            thermal_resistance: at(dynprm, 2),
            thermal_capacitance: at(dynprm, 3),
            ambient: at(dynprm, 4),
            sigma0: at(dynprm, 5),
            sigma1: at(dynprm, 6),
            slewmax: at(dynprm, 7),
            imax: at(dynprm, 8),
            cogging_amplitude: at(biasprm, 0),
            cogging_poles: at(biasprm, 1),
            cogging_phase: at(biasprm, 2),
            tau_c: at(biasprm, 3),
            tau_s: at(biasprm, 4),
            omega_s: at(biasprm, 5),
            ..MjDcMotorCfg::new(0.0, 0.0, timestep)
        }
    }
}

impl Kind for MjDcMotorCfg {
    const NAME: &'static str = "MjDcMotor";
    const KEY: &'static str = "mj_dcmotor";
    const PARAMS: &'static [ParamSpec] = &[
        param("resistance", "Ω", "nominal resistance R", Domain::Positive),
        param(
            "motorconst",
            "N·m/A",
            "motor constant K",
            Domain::NonNegative,
        ),
        param(
            "alpha",
            "1/K",
            "resistance temperature coefficient",
            Domain::Finite,
        ),
        param("t0", "°C", "reference temperature", Domain::Finite),
        param("kp", "N·m/rad", "controller kp", Domain::Finite),
        param("ki", "N·m/(rad·s)", "controller ki", Domain::Finite),
        param("kd", "N·m·s/rad", "controller kd", Domain::Finite),
        param(
            "vmax",
            "V",
            "controller voltage limit (<= 0: off)",
            Domain::Finite,
        ),
        param(
            "te",
            "s",
            "electrical time constant (<= 0: no current slot)",
            Domain::Finite,
        ),
        param(
            "didt_max",
            "A/s",
            "current rate limit (<= 0: off)",
            Domain::Finite,
        ),
        param(
            "thermal_resistance",
            "K/W",
            "thermal resistance (<= 0: no thermal model)",
            Domain::Finite,
        ),
        param(
            "thermal_capacitance",
            "J/K",
            "thermal capacitance",
            Domain::Finite,
        ),
        param("ambient", "°C", "ambient temperature", Domain::Finite),
        param(
            "sigma0",
            "N·m/rad",
            "LuGre bristle stiffness (<= 0: no LuGre)",
            Domain::Finite,
        ),
        param(
            "sigma1",
            "N·m·s/rad",
            "LuGre bristle damping",
            Domain::Finite,
        ),
        param(
            "slewmax",
            "1/s",
            "first control's rate limit (<= 0: off)",
            Domain::Finite,
        ),
        param(
            "imax",
            "rad·s",
            "integral clamp (<= 0: off)",
            Domain::Finite,
        ),
        param(
            "cogging_amplitude",
            "N·m",
            "cogging amplitude A",
            Domain::Finite,
        ),
        param(
            "cogging_poles",
            "1",
            "cogging pole count N_p",
            Domain::Finite,
        ),
        param("cogging_phase", "rad", "cogging phase", Domain::Finite),
        param("tau_c", "N·m", "LuGre Coulomb torque", Domain::Finite),
        param("tau_s", "N·m", "LuGre static torque", Domain::Finite),
        param(
            "omega_s",
            "rad/s",
            "LuGre Stribeck velocity",
            Domain::Finite,
        ),
        param("gear", "1", "gear", Domain::Finite),
        param("force_lo", "N·m", "saturation low", Domain::Extended),
        param("force_hi", "N·m", "saturation high", Domain::Extended),
        param(
            "ctrl_lo",
            "1",
            "every control's range low",
            Domain::Extended,
        ),
        param(
            "ctrl_hi",
            "1",
            "every control's range high",
            Domain::Extended,
        ),
        param("timestep", "s", "MuJoCo's timestep", Domain::Positive),
    ];
    const STATE: &'static [StateSpec] = &STATE;
    const READS: &'static [CommandField] = &CommandField::ALL;
    const INPUTS: &'static [PlaneSpec] = &[VOLTAGE];
    const OUTPUTS: &'static [PlaneSpec] = &OUTPUTS;
    const WGSL: &'static str = include_str!("../../../../../shaders/mj_stateful.wgsl");

    fn param_value(&self, k: usize) -> f32 {
        [
            self.resistance,
            self.motorconst,
            self.alpha,
            self.t0,
            self.kp,
            self.ki,
            self.kd,
            self.vmax,
            self.te,
            self.didt_max,
            self.thermal_resistance,
            self.thermal_capacitance,
            self.ambient,
            self.sigma0,
            self.sigma1,
            self.slewmax,
            self.imax,
            self.cogging_amplitude,
            self.cogging_poles,
            self.cogging_phase,
            self.tau_c,
            self.tau_s,
            self.omega_s,
            self.gear,
            self.force_range[0],
            self.force_range[1],
            self.ctrl_range[0],
            self.ctrl_range[1],
            self.timestep,
        ][k]
    }

    fn from_fields<'de, D: serde::Deserializer<'de>>(fields: D) -> Result<Self, D::Error> {
        <Self as serde::Deserialize>::deserialize(fields)
    }

    fn example() -> Self {
        // A small geared motor with every state on (the golden
        // `dc_slots_31_SITBC` family's shape).
        let mut m = MjDcMotorCfg::new(2.0, 0.05, 0.002);
        m.inputs = CtrlInputs(CtrlInputs::POS | CtrlInputs::VEL | CtrlInputs::VOLTAGE);
        (m.kp, m.ki, m.kd, m.vmax, m.imax, m.slewmax) = (2.0, 0.5, 0.05, 24.0, 0.2, 10.0);
        (m.te, m.didt_max) = (0.001, 2000.0);
        (
            m.alpha,
            m.t0,
            m.thermal_resistance,
            m.thermal_capacitance,
            m.ambient,
        ) = (0.0039, 25.0, 5.0, 20.0, 25.0);
        (m.sigma0, m.sigma1, m.tau_c, m.tau_s, m.omega_s) = (300.0, 0.2, 0.03, 0.05, 0.5);
        (m.cogging_amplitude, m.cogging_poles, m.cogging_phase) = (0.002, 12.0, 0.1);
        m.force_range = [-0.5, 0.5];
        m
    }

    fn group_data(&self) -> Vec<f32> {
        let [b0, b1, b2] = self.affine_bias;
        vec![
            self.inputs.0 as f32,
            self.bias_type as u32 as f32,
            b0,
            b1,
            b2,
        ]
    }

    fn validate(&self, group: &str) -> Result<(), Error> {
        let bits = self.inputs.0;
        let controller = bits & (CtrlInputs::POS | CtrlInputs::VEL | CtrlInputs::FF) != 0;
        if bits & CtrlInputs::NONE != 0 && bits != CtrlInputs::NONE {
            return Err(invalid(
                group,
                "input",
                bits as f32,
                "`none` excludes every other input",
            ));
        }
        if self.motorconst <= 0.0 && bits != CtrlInputs::NONE {
            return Err(invalid(
                group,
                "motorconst",
                self.motorconst,
                "a driven motor needs K > 0",
            ));
        }
        if self.ki != 0.0 && !self.inputs.has(CtrlInputs::POS) {
            return Err(invalid(
                group,
                "ki",
                self.ki,
                "an integral needs the pos input",
            ));
        }
        if self.slewmax > 0.0 && !controller {
            return Err(invalid(
                group,
                "slewmax",
                self.slewmax,
                "slew needs a pos, vel or ff input",
            ));
        }
        if self.thermal_resistance > 0.0 && self.thermal_capacitance <= 0.0 {
            return Err(invalid(
                group,
                "thermal_capacitance",
                self.thermal_capacitance,
                "a thermal model needs C > 0",
            ));
        }
        if let Some(&b) = self.affine_bias.iter().find(|b| !b.is_finite()) {
            return Err(invalid(group, "affine_bias", b, "must be finite"));
        }
        Ok(())
    }

    #[inline(always)]
    fn law<I: LawIo>(io: &mut I) -> f32 {
        const R: usize = param_slot(MjDcMotorCfg::PARAMS, "resistance");
        const K: usize = param_slot(MjDcMotorCfg::PARAMS, "motorconst");
        const ALPHA: usize = param_slot(MjDcMotorCfg::PARAMS, "alpha");
        const T0: usize = param_slot(MjDcMotorCfg::PARAMS, "t0");
        const KP: usize = param_slot(MjDcMotorCfg::PARAMS, "kp");
        const KI: usize = param_slot(MjDcMotorCfg::PARAMS, "ki");
        const KD: usize = param_slot(MjDcMotorCfg::PARAMS, "kd");
        const VMAX: usize = param_slot(MjDcMotorCfg::PARAMS, "vmax");
        const TE: usize = param_slot(MjDcMotorCfg::PARAMS, "te");
        const DIDT: usize = param_slot(MjDcMotorCfg::PARAMS, "didt_max");
        const RTH: usize = param_slot(MjDcMotorCfg::PARAMS, "thermal_resistance");
        const CTH: usize = param_slot(MjDcMotorCfg::PARAMS, "thermal_capacitance");
        const TA: usize = param_slot(MjDcMotorCfg::PARAMS, "ambient");
        const S0: usize = param_slot(MjDcMotorCfg::PARAMS, "sigma0");
        const S1: usize = param_slot(MjDcMotorCfg::PARAMS, "sigma1");
        const SLEW: usize = param_slot(MjDcMotorCfg::PARAMS, "slewmax");
        const IMAX: usize = param_slot(MjDcMotorCfg::PARAMS, "imax");
        const COG_A: usize = param_slot(MjDcMotorCfg::PARAMS, "cogging_amplitude");
        const COG_N: usize = param_slot(MjDcMotorCfg::PARAMS, "cogging_poles");
        const COG_P: usize = param_slot(MjDcMotorCfg::PARAMS, "cogging_phase");
        const TAU_C: usize = param_slot(MjDcMotorCfg::PARAMS, "tau_c");
        const TAU_S: usize = param_slot(MjDcMotorCfg::PARAMS, "tau_s");
        const OMEGA_S: usize = param_slot(MjDcMotorCfg::PARAMS, "omega_s");
        const GEAR: usize = param_slot(MjDcMotorCfg::PARAMS, "gear");
        const F_LO: usize = param_slot(MjDcMotorCfg::PARAMS, "force_lo");
        const F_HI: usize = param_slot(MjDcMotorCfg::PARAMS, "force_hi");
        const C_LO: usize = param_slot(MjDcMotorCfg::PARAMS, "ctrl_lo");
        const C_HI: usize = param_slot(MjDcMotorCfg::PARAMS, "ctrl_hi");
        const H: usize = param_slot(MjDcMotorCfg::PARAMS, "timestep");
        const S_INT: usize = state_slot(&STATE, "integral");
        const S_TEMP: usize = state_slot(&STATE, "temperature");
        const S_BRISTLE: usize = state_slot(&STATE, "bristle");
        const S_CURRENT: usize = state_slot(&STATE, "current");
        const RAW: usize = plane_slot(MjDcMotorCfg::OUTPUTS, RAW_FORCE.name);
        // Every parameter is loaded and every switched part computed, the
        // parts that are off then dropped by selects: a branch, a load
        // under one or a call to the C library would keep the loop one
        // element at a time.
        let (bits, bias) = (io.data_at::<0>() as u32, io.data_at::<1>() as u32);
        let affine = [io.data_at::<2>(), io.data_at::<3>(), io.data_at::<4>()];
        let gear = io.param(GEAR);
        let (length, velocity) = (gear * io.pos(), gear * io.vel());
        let (lo, hi) = (io.param(C_LO), io.param(C_HI));
        let control = |present: bool, value: f32| {
            let value = clip(value, lo, hi);
            if present {
                value
            } else {
                0.0
            }
        };
        let mut u = [
            control(
                bits & CtrlInputs::POS != 0,
                io.target(CommandField::Position),
            ),
            control(
                bits & CtrlInputs::VEL != 0,
                io.target(CommandField::Velocity),
            ),
            control(bits & CtrlInputs::FF != 0, io.target(CommandField::Effort)),
        ];
        let voltage = control(bits & CtrlInputs::VOLTAGE != 0, io.input(0));
        let h = io.param(H);
        // No clamp for a finite value (the WGSL twin's bounds as well).
        let unlimited = [f32::MIN, f32::MAX];
        let slew_dot = slew_first(io, &mut u, bits, io.param(SLEW), h, unlimited);
        // Integral, from its current value, clamped to ±imax.
        let (ki, imax) = (io.param(KI), io.param(IMAX));
        let integral = io.state(S_INT);
        let range = if imax > 0.0 { [-imax, imax] } else { unlimited };
        let (int_dot, _) = integrate(io, ki > 0.0, u[0] - length, imax, h, range);
        // Resistance at the current temperature rise.
        let (r, k) = (io.param(R), io.param(K));
        let (r_th, c_th) = (io.param(RTH), io.param(CTH));
        let (alpha, ambient, t0) = (io.param(ALPHA), io.param(TA), io.param(T0));
        let dtemp = io.state(S_TEMP);
        let heated = r * (1.0 + alpha * ((dtemp + ambient) - t0));
        let r_t = if r_th > 0.0 { heated } else { r };
        // Drive voltage.
        let controller = bits & (CtrlInputs::POS | CtrlInputs::VEL | CtrlInputs::FF) != 0;
        let (kp, kd, vmax) = (io.param(KP), io.param(KD), io.param(VMAX));
        let tau = kp * (u[0] - length) + kd * (u[1] - velocity) + ki * integral + u[2];
        let vc = (r / k) * tau + k * velocity;
        let vc = if vmax > 0.0 {
            clip(vc, -vmax, vmax)
        } else {
            vc
        };
        let v = if controller { vc + voltage } else { voltage };
        // Current.
        let (te, didt) = (io.param(TE), io.param(DIDT));
        let current = io.state(S_CURRENT);
        let rate = (v / r_t - (k / r_t) * velocity - current) / te;
        let rate = if didt > 0.0 {
            clip(rate, -didt, didt)
        } else {
            rate
        };
        let next = current + rate * te * -expm1(-h / te);
        let inductance = te > 0.0;
        let (current_dot, current_next) = if inductance {
            (rate, next)
        } else {
            (0.0, current)
        };
        io.set_state(S_CURRENT, current_next);
        // Temperature.
        let i_t = if inductance {
            current
        } else {
            (v - k * velocity) / r_t
        };
        let rate = (r_t * i_t * i_t - dtemp / r_th) / c_th;
        let thermal = r_th > 0.0;
        let temp_dot = if thermal { rate } else { 0.0 };
        io.set_state(S_TEMP, if thermal { dtemp + rate * h } else { dtemp });
        // LuGre bristle.
        let (sigma0, sigma1) = (io.param(S0), io.param(S1));
        let (tau_c, tau_s, omega_s) = (io.param(TAU_C), io.param(TAU_S), io.param(OMEGA_S));
        let z = io.state(S_BRISTLE);
        let ratio = velocity / omega_s.max(1e-15);
        let g = tau_c + (tau_s - tau_c) * exp(-(ratio * ratio));
        let a = -sigma0 * velocity.abs() / g.max(1e-15);
        let rate = a * z + velocity;
        let c = if a.abs() > 1e-15 { expm1(a * h) / a } else { h };
        let next = exp(a * h) * z + c * velocity;
        let lugre = sigma0 > 0.0;
        let z_dot = if lugre { rate } else { 0.0 };
        io.set_state(S_BRISTLE, if lugre { next } else { z });
        // Force: actearly current, or the stateless law (with back-EMF
        // under the dcmotor bias).
        let gain = k / r_t.max(1e-15);
        let stateless = if bias == DcMotorBias::DcMotor as u32 {
            gain * v + (0.0 - gain * k * velocity)
        } else {
            gain * v
        };
        let f = if inductance {
            k * current_next
        } else {
            stateless
        };
        let f = if bias == DcMotorBias::Affine as u32 {
            f + (affine[0] + affine[1] * length + affine[2] * velocity)
        } else {
            f
        };
        let f = io.saturate(RAW, f, io.param(F_LO), io.param(F_HI));
        let amplitude = io.param(COG_A);
        let cogging = amplitude * sin(io.param(COG_N) * length + io.param(COG_P));
        let motor = bias == DcMotorBias::DcMotor as u32;
        let f = if motor && amplitude != 0.0 {
            f + cogging
        } else {
            f
        };
        let f = if motor && lugre {
            f - (sigma0 * z + sigma1 * z_dot)
        } else {
            f
        };
        io.set_output(0, f);
        io.set_output(1, slew_dot);
        io.set_output(2, int_dot);
        io.set_output(3, temp_dot);
        io.set_output(4, z_dot);
        io.set_output(5, current_dot);
        gear * f
    }
}
