//! MuJoCo 4's stateful actuators (`mujoco-actuator-golden/v2`, MuJoCo
//! 4.0.0's own `mj_forward` and Euler `mj_step`): `<pid>` and `<dcmotor>`
//! (and `<general>` forms of them) on joints and fixed tendons, as single
//! steps from a written state and as 60-step episodes chained from their
//! initial state.
//!
//! Each case runs on one env of a one-joint [`MjPidCfg`](sinew::MjPidCfg) or
//! [`MjDcMotorCfg`](sinew::MjDcMotorCfg) plan built from the compiled
//! parameters the file records. Compared: `actuator_force`, `act_dot` and
//! `act_next` per slot (by the slot names MuJoCo lists) and
//! `qfrc_actuator`, within [`MUJOCO_TOLERANCE`](super::MUJOCO_TOLERANCE).
//! A tendon's length and velocity (`Σ coef·q`) are the column's joint state,
//! its actuatorfrcrange (one actuator per tendon) folds into the force
//! range, and its joint efforts are `coef·gear·f`. Several actuators sharing
//! a force range, and the mixed `<general>` forms (a dcmotor gain on another dynamics or bias, a
//! dcmotor bias under another gain) are skipped with that reason.

use serde_json::Value;
use sinew::{
    ActuatorCfg, ActuatorCmd, Backend, CtrlInputs, EnvIds, GroupCfg, MjDcMotorCfg, MjPidCfg, Plan,
    PlanOptions, Robot, Values,
};

use super::json::{arr, arr_at, bool_at, field, num, num_at, nums_at, str_at};
use super::{MakeBackend, Outcome, Stop, Tally, MUJOCO_TOLERANCE};

const GROUP: &str = "actuator";

pub(super) fn run_case(
    case: &Value,
    id: &str,
    make: MakeBackend<'_>,
    tally: &mut Tally,
) -> Outcome {
    match run(case, id, make, tally) {
        Ok(()) => Outcome::Passed,
        Err(stop) => stop.into(),
    }
}

fn run(case: &Value, id: &str, make: MakeBackend<'_>, tally: &mut Tally) -> Result<(), Stop> {
    let kind = str_at(case, "kind")?;
    if kind == "multi" {
        return Err(Stop::Skip(
            "several actuators sharing a tendon or joint actuatorfrcrange: a coupling across \
             columns the MuJoCo 4 kinds do not model yet"
                .into(),
        ));
    }
    let params = field(case, "params")?;
    let timestep = match kind {
        "episode" => num_at(case, "timestep")?,
        _ => num_at(field(case, "inputs")?, "timestep")?,
    };
    let actuator = actuator(params, timestep as f32)?;
    compile_check(case, params, &actuator, timestep as f32, id, tally)?;
    let actuator = with_tendon_range(actuator, params)?;
    let (slots, inputs) = (
        strings(params, "act_slots")?,
        strings(params, "input_names")?,
    );
    let robot = Robot::from_joints(["joint"]);
    let plan = Plan::new(
        &robot,
        vec![GroupCfg::new(GROUP, ["joint"], actuator)],
        1,
        PlanOptions::default(),
    )
    .map_err(error)?;
    let mut backend = make(plan).map_err(error)?;
    let backend = backend.as_mut();
    let t = field(params, "transmission")?;
    let coef = nums_at(t, "coef")?;
    let clamped: Vec<bool> = arr_at(t, "jnt_actfrclimited")?
        .iter()
        .map(|v| v.as_bool().unwrap_or(false))
        .collect();
    let mut step = Step {
        backend,
        slots: &slots,
        inputs: &inputs,
        coef: &coef,
        clamped: &clamped,
        tally,
        id,
    };
    match kind {
        "single" => {
            let i = field(case, "inputs")?;
            let o = field(case, "outputs")?;
            step.set_state(&nums_at(i, "act")?)?;
            step.run(
                "",
                &nums_at(i, "qpos")?,
                &nums_at(i, "qvel")?,
                &nums_at(i, "ctrl")?,
                Expected {
                    force: num_at(o, "actuator_force")?,
                    act_dot: nums_at(o, "act_dot")?,
                    act_next: nums_at(o, "act_next")?,
                    qfrc: nums_at(o, "qfrc_actuator")?,
                },
            )
        }
        "episode" => {
            step.set_state(&nums_at(case, "act0")?)?;
            let s = field(case, "steps")?;
            let rows = |key: &str| -> Result<Vec<Vec<f64>>, Stop> {
                arr_at(s, key)?
                    .iter()
                    .map(|row| match row {
                        Value::Array(_) => arr(row)?.iter().map(num).collect::<Result<Vec<_>, _>>(),
                        other => num(other).map(|x| vec![x]),
                    })
                    .collect::<Result<_, _>>()
                    .map_err(Stop::Fail)
            };
            let (qpos, qvel, ctrl) = (rows("qpos")?, rows("qvel")?, rows("ctrl")?);
            let (force, act_dot, act_next, qfrc) = (
                rows("actuator_force")?,
                rows("act_dot")?,
                rows("act_next")?,
                rows("qfrc_actuator")?,
            );
            let n = num_at(case, "nsteps")? as usize;
            for (name, rows) in [
                ("qpos", &qpos),
                ("qvel", &qvel),
                ("ctrl", &ctrl),
                ("actuator_force", &force),
            ] {
                if rows.len() != n {
                    return Err(Stop::Fail(format!(
                        "steps.{name} has {} rows, not {n}",
                        rows.len()
                    )));
                }
            }
            for (j, controls) in ctrl.iter().enumerate() {
                let at = |rows: &Vec<Vec<f64>>| -> Result<f64, Stop> {
                    rows.get(j)
                        .and_then(|r| r.first())
                        .copied()
                        .ok_or_else(|| Stop::Fail(format!("step {j} is missing a value")))
                };
                let row = |rows: &Vec<Vec<f64>>| rows.get(j).cloned().unwrap_or_default();
                step.run(
                    &format!("steps[{j}]."),
                    &row(&qpos),
                    &row(&qvel),
                    controls,
                    Expected {
                        force: at(&force)?,
                        act_dot: row(&act_dot),
                        act_next: row(&act_next),
                        qfrc: row(&qfrc),
                    },
                )?;
            }
            Ok(())
        }
        other => Err(Stop::Fail(format!("unknown case kind `{other}`"))),
    }
}

/// `v[key]` as strings.
fn strings(v: &Value, key: &str) -> Result<Vec<String>, Stop> {
    arr_at(v, key)?
        .iter()
        .map(|s| {
            s.as_str()
                .map(str::to_owned)
                .ok_or_else(|| Stop::Fail(format!("`{key}` holds a non-string")))
        })
        .collect()
}

/// `v[key][0]`.
fn first(v: &Value, key: &str) -> Result<f64, String> {
    nums_at(v, key)?
        .first()
        .copied()
        .ok_or_else(|| format!("`{key}` is empty"))
}

/// The kind for a case's compiled parameters.
fn actuator(p: &Value, timestep: f32) -> Result<ActuatorCfg, Stop> {
    let trntype = str_at(p, "trntype")?;
    if trntype != "joint" && trntype != "tendon" {
        return Err(Stop::Skip(format!("a {trntype} transmission")));
    }
    let types = (
        str_at(p, "dyntype")?,
        str_at(p, "gaintype")?,
        str_at(p, "biastype")?,
    );
    let (gainprm, dynprm, biasprm) = (
        nums_at(p, "gainprm")?,
        nums_at(p, "dynprm")?,
        nums_at(p, "biasprm")?,
    );
    let inputs = CtrlInputs(num_at(p, "ctrlspec")? as u32);
    let gear = num_at(p, "gear").or_else(|_| first(p, "gear"))? as f32;
    let range = |key: &str, limited: bool| -> Result<[f32; 2], String> {
        if !limited {
            return Ok([f32::NEG_INFINITY, f32::INFINITY]);
        }
        let r = nums_at(p, key)?;
        match r[..] {
            [lo, hi] => Ok([lo as f32, hi as f32]),
            _ => Err(format!("`{key}` is not [lo, hi]")),
        }
    };
    let force_range = range("forcerange", bool_at(p, "forcelimited")?)?;
    let ctrl_ranges: Vec<[f32; 2]> = arr_at(p, "ctrlrange")?
        .iter()
        .zip(arr_at(p, "ctrllimited")?)
        .map(|(r, limited)| {
            if !limited.as_bool().unwrap_or(false) {
                return Ok([f32::NEG_INFINITY, f32::INFINITY]);
            }
            match arr(r)?.iter().map(num).collect::<Result<Vec<_>, _>>()?[..] {
                [lo, hi] => Ok([lo as f32, hi as f32]),
                _ => Err("a ctrlrange row is not [lo, hi]".to_string()),
            }
        })
        .collect::<Result<_, String>>()?;
    let names: Vec<&str> = arr_at(p, "input_names")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let range_of = |name: &str| {
        names
            .iter()
            .position(|n| *n == name)
            .and_then(|k| ctrl_ranges.get(k).copied())
            .unwrap_or([f32::NEG_INFINITY, f32::INFINITY])
    };
    match types {
        ("pid" | "none", "pid", "affine") => {
            let at = |v: &[f64], k: usize| v.get(k).copied().unwrap_or(0.0);
            let (gainprm, dynprm, biasprm) = (
                [at(&gainprm, 0)],
                [at(&dynprm, 0), at(&dynprm, 1)],
                [at(&biasprm, 0), at(&biasprm, 1), at(&biasprm, 2)],
            );
            let mut pid = MjPidCfg::new(-biasprm[1] as f32, -biasprm[2] as f32, timestep);
            if biasprm[2] > 0.0 {
                // `<general>`: a positive biasprm[2] is a damping ratio of
                // the reflected mass (Part 5.9).
                let t = field(p, "transmission")?;
                let m0 = nums_at(t, "dof_M0")?;
                let coef = nums_at(t, "coef")?;
                let inv: f64 = coef.iter().zip(&m0).map(|(c, m)| (gear as f64 * c).powi(2) / m).sum();
                pid.kv = (biasprm[2] * 2.0 * (-biasprm[1] / inv).sqrt()) as f32;
            }
            pid.inputs = inputs;
            pid.ki = gainprm[0] as f32;
            pid.imax = dynprm[0] as f32;
            pid.slewmax = dynprm[1] as f32;
            pid.bias0 = biasprm[0] as f32;
            pid.gear = gear;
            pid.force_range = force_range;
            pid.pos_range = range_of("pos");
            pid.vel_range = range_of("vel");
            pid.ff_range = range_of("ff");
            pid.act_range = range("actrange", bool_at(p, "actlimited")?)?;
            pid.act_early = bool_at(p, "actearly")?;
            Ok(pid.into())
        }
        ("dcmotor", "dcmotor", "dcmotor") => {
            if ctrl_ranges.windows(2).any(|w| w[0] != w[1]) {
                return Err(Stop::Skip("a dcmotor whose controls have different ranges".into()));
            }
            let mut m = MjDcMotorCfg::from_compiled(inputs, &gainprm, &dynprm, &biasprm, timestep);
            m.gear = gear;
            m.force_range = force_range;
            m.ctrl_range = ctrl_ranges.first().copied().unwrap_or([f32::NEG_INFINITY, f32::INFINITY]);
            Ok(m.into())
        }
        (d, g, b) => Err(Stop::Skip(format!(
            "a mixed <general> form (dyn {d}, gain {g}, bias {b}): only pid and dcmotor as compiled by their elements"
        ))),
    }
}

/// A tendon's actuatorfrcrange scales the sum of its actuators' forces
/// before the forcerange clamp; for the tendon's only actuator that is a
/// clamp, and two clamps in a row are one clamp to their intersection.
fn with_tendon_range(mut cfg: ActuatorCfg, p: &Value) -> Result<ActuatorCfg, Stop> {
    let t = field(p, "transmission")?;
    if t.get("tendon_actfrclimited").and_then(Value::as_bool) != Some(true) {
        return Ok(cfg);
    }
    let [lo, hi] = match nums_at(t, "tendon_actfrcrange")?[..] {
        [lo, hi] => [lo as f32, hi as f32],
        _ => return Err(Stop::Fail("tendon_actfrcrange is not [lo, hi]".into())),
    };
    let range = match &mut cfg {
        ActuatorCfg::MjPid(c) => &mut c.force_range,
        ActuatorCfg::MjDcMotor(c) => &mut c.force_range,
        _ => return Ok(cfg),
    };
    *range = [range[0].max(lo), range[1].min(hi)];
    Ok(cfg)
}

/// MuJoCo's compile-time mapping: the element's MJCF attributes, compiled
/// by [`DcMotorMjcf`](sinew::DcMotorMjcf) or [`PidMjcf`](sinew::PidMjcf),
/// give the parameters MuJoCo compiled (each within 1e-6 relative; the
/// control inputs exactly). `<general>` elements write the arrays
/// themselves and have nothing to compile.
fn compile_check(
    case: &Value,
    params: &Value,
    compiled: &ActuatorCfg,
    timestep: f32,
    id: &str,
    tally: &mut Tally,
) -> Result<(), Stop> {
    let spec = field(case, "spec")?;
    let attrs = field(spec, "attrs")?.clone();
    let ours: ActuatorCfg = match str_at(spec, "element")? {
        "dcmotor" => serde_json::from_value::<sinew::DcMotorMjcf>(attrs)
            .map_err(|e| Stop::Fail(format!("spec.attrs: {e}")))?
            .compile(timestep)
            .map_err(error)?
            .into(),
        "pid" => {
            let t = field(params, "transmission")?;
            let (m0, coef) = (nums_at(t, "dof_M0")?, nums_at(t, "coef")?);
            let gear = num_at(params, "gear").or_else(|_| first(params, "gear"))?;
            let inverse: f64 = coef
                .iter()
                .zip(&m0)
                .map(|(c, m)| (gear * c).powi(2) / m)
                .sum();
            let range = match t.get("tendon_range") {
                Some(r) => Some(r),
                None => arr_at(t, "jnt_range")?.first(),
            };
            let range = range
                .map(|r| arr(r).and_then(|r| r.iter().map(num).collect::<Result<Vec<_>, _>>()))
                .transpose()?
                .unwrap_or_default();
            let joint_range = [
                range.first().copied().unwrap_or(0.0),
                range.get(1).copied().unwrap_or(0.0),
            ];
            serde_json::from_value::<sinew::PidMjcf>(attrs)
                .map_err(|e| Stop::Fail(format!("spec.attrs: {e}")))?
                .compile(timestep, 1.0 / inverse, joint_range)
                .map_err(error)?
                .into()
        }
        _ => return Ok(()),
    };
    if ours.group_data() != compiled.group_data() {
        return Err(Stop::Fail(format!(
            "compile: the inputs differ ({:?} vs MuJoCo's {:?})",
            ours.group_data(),
            compiled.group_data()
        )));
    }
    for (k, spec) in compiled.params().iter().enumerate() {
        let (o, r) = (ours.param_value(k), compiled.param_value(k));
        let allowed = 1e-6 * f64::from(r.abs()).max(1.0);
        if !tally.compare(
            id,
            || format!("compile.{}", spec.name),
            f64::from(o),
            f64::from(r),
            allowed,
        ) {
            return Err(Stop::Fail(format!(
                "compile: {} = {o} from the MJCF attributes, MuJoCo compiled {r}",
                spec.name
            )));
        }
    }
    Ok(())
}

/// MuJoCo's outputs of one step.
struct Expected {
    force: f64,
    act_dot: Vec<f64>,
    act_next: Vec<f64>,
    /// Per dof of the transmission.
    qfrc: Vec<f64>,
}

/// One case's backend and what it names.
struct Step<'a> {
    backend: &'a mut dyn Backend,
    slots: &'a [String],
    inputs: &'a [String],
    /// The transmission's coefficients per dof (`[1]` for a joint): the
    /// actuator's length is `gear·Σ coef·q`, its joint efforts `coef·gear·f`.
    coef: &'a [f64],
    /// Dofs whose joint actuatorfrcrange clamps the sum (the simulator's
    /// MuJoCo stage, not compared).
    clamped: &'a [bool],
    tally: &'a mut Tally,
    id: &'a str,
}

/// One step's inputs: the joint state (along the transmission) and the controls.
struct Inputs {
    qpos: f64,
    qvel: f64,
    ctrl: Vec<f64>,
}

impl Step<'_> {
    fn set_state(&mut self, act: &[f64]) -> Result<(), Stop> {
        if act.len() != self.slots.len() {
            return Err(Stop::Fail(format!(
                "{} act values for {} slots",
                act.len(),
                self.slots.len()
            )));
        }
        self.backend.reset(EnvIds::All).map_err(error)?;
        let act: Vec<f32> = act.iter().map(|&a| a as f32).collect();
        self.write_state(&act)
    }

    fn write_state(&mut self, act: &[f32]) -> Result<(), Stop> {
        for (name, &value) in self.slots.iter().zip(act) {
            self.backend
                .set_state(GROUP, name, EnvIds::All, Values::Scalar(value))
                .map_err(error)?;
        }
        Ok(())
    }

    fn read_state(&mut self) -> Result<Vec<f32>, Stop> {
        let mut one = [0.0f32];
        let mut out = Vec::with_capacity(self.slots.len());
        for name in self.slots {
            self.backend
                .read_state(GROUP, name, &mut one)
                .map_err(error)?;
            out.push(one[0]);
        }
        Ok(out)
    }

    /// Steps once from `inputs` and reads, in order, `actuator_force`,
    /// `qfrc_actuator`, then each slot's `act_dot` and `act_next`.
    fn outputs(&mut self, inputs: &Inputs) -> Result<Vec<f32>, Stop> {
        let mut cmd = ActuatorCmd::zeros(1, 1);
        cmd.pos[0] = inputs.qpos as f32;
        cmd.vel[0] = inputs.qvel as f32;
        let mut voltage = 0.0;
        for (name, &u) in self.inputs.iter().zip(&inputs.ctrl) {
            let u = u as f32;
            match name.as_str() {
                "pos" => cmd.position_target[0] = u,
                "vel" => cmd.velocity_target[0] = u,
                "ff" => cmd.effort_target[0] = u,
                "voltage" => voltage = u,
                other => return Err(Stop::Skip(format!("control `{other}`"))),
            }
        }
        let has_voltage = self
            .backend
            .plan()
            .input_planes()
            .iter()
            .any(|p| p.name == "voltage");
        if has_voltage {
            self.backend
                .set_input("voltage", &[voltage])
                .map_err(error)?;
        }
        self.backend.step(&cmd).map_err(error)?;
        if !self.backend.nonfinite_envs().map_err(error)?.is_empty() {
            return Err(Stop::Fail(
                "the step zeroed the env for a non-finite value".into(),
            ));
        }
        let mut one = [0.0f32];
        self.backend
            .read_output("actuator_force", &mut one)
            .map_err(error)?;
        let mut out = vec![one[0]];
        self.backend.read_ctrl(&mut one).map_err(error)?;
        out.push(one[0]);
        for name in self.slots {
            self.backend
                .read_output(&format!("act_dot_{name}"), &mut one)
                .map_err(error)?;
            out.push(one[0]);
            self.backend
                .read_state(GROUP, name, &mut one)
                .map_err(error)?;
            out.push(one[0]);
        }
        Ok(out)
    }

    /// How far each output moves when every input is nudged by its f32
    /// rounding (half an ulp, in four sign patterns), from the same state.
    fn sensitivity(
        &mut self,
        inputs: &Inputs,
        act: &[f32],
        ours: &[f32],
    ) -> Result<Vec<f64>, Stop> {
        let mut spread = vec![0.0f64; ours.len()];
        for pattern in 0..4u32 {
            let nudge = |x: f64, k: u32| super::mujoco::nudge(x, k, pattern);
            let nudged = Inputs {
                qpos: nudge(inputs.qpos, 0),
                qvel: nudge(inputs.qvel, 1),
                ctrl: (inputs.ctrl.iter().enumerate())
                    .map(|(k, &u)| nudge(u, 2 + k as u32))
                    .collect(),
            };
            let act: Vec<f32> = (act.iter().enumerate())
                .map(|(k, &a)| nudge(f64::from(a), 7 + k as u32) as f32)
                .collect();
            self.write_state(&act)?;
            let moved = self.outputs(&nudged)?;
            for ((s, m), o) in spread.iter_mut().zip(&moved).zip(ours) {
                *s = s.max(f64::from(*m - *o).abs());
            }
        }
        Ok(spread)
    }

    /// One step against MuJoCo's outputs. A value off by more than the
    /// tolerance passes only when the f32 rounding of the step's own inputs
    /// moves it that far (its sensitivity, printed beside it).
    fn run(
        &mut self,
        prefix: &str,
        qpos: &[f64],
        qvel: &[f64],
        ctrl: &[f64],
        want: Expected,
    ) -> Result<(), Stop> {
        if want.act_dot.len() != self.slots.len() || want.act_next.len() != self.slots.len() {
            return Err(Stop::Fail(format!(
                "{prefix}act_dot/act_next do not list every slot"
            )));
        }
        let dofs = self.coef.len();
        if qpos.len() != dofs || qvel.len() != dofs || want.qfrc.len() != dofs {
            return Err(Stop::Fail(format!(
                "{prefix}qpos, qvel and qfrc_actuator must list the {dofs} dofs"
            )));
        }
        let along = |x: &[f64]| self.coef.iter().zip(x).map(|(c, x)| c * x).sum::<f64>();
        let inputs = Inputs {
            qpos: along(qpos),
            qvel: along(qvel),
            ctrl: ctrl.to_vec(),
        };
        let act = self.read_state()?;
        // `outputs` reads [force, gear·f, slots…]; compared are the force,
        // each unclamped dof's `coef·gear·f`, then the slots.
        let compared: Vec<usize> = (0..dofs)
            .filter(|&k| !self.clamped.get(k).copied().unwrap_or(false))
            .collect();
        let coef = self.coef.to_vec();
        let expand = |out: &[f32]| -> Vec<f32> {
            let mut v = vec![out[0]];
            v.extend(
                compared
                    .iter()
                    .map(|&k| (coef[k] * f64::from(out[1])) as f32),
            );
            v.extend_from_slice(&out[2..]);
            v
        };
        let raw = self.outputs(&inputs)?;
        let ours = expand(&raw);
        let mut names = vec![("actuator_force".to_owned(), want.force)];
        for &k in &compared {
            names.push((format!("qfrc_actuator[{k}]"), want.qfrc[k]));
        }
        for (k, name) in self.slots.iter().enumerate() {
            names.push((format!("act_dot[{k}] ({name})"), want.act_dot[k]));
            names.push((format!("act_next[{k}] ({name})"), want.act_next[k]));
        }
        let allowed = |r: f64| MUJOCO_TOLERANCE * r.abs().max(1.0);
        let off = names
            .iter()
            .zip(&ours)
            .any(|((_, r), &o)| (f64::from(o) - r).abs() > allowed(*r));
        let sensitivity = if off {
            let after = self.read_state()?;
            let s = self.sensitivity(&inputs, &act, &raw)?;
            self.write_state(&after)?;
            let mut v = vec![s[0]];
            v.extend(compared.iter().map(|&k| coef[k].abs() * s[1]));
            v.extend_from_slice(&s[2..]);
            v
        } else {
            vec![0.0; ours.len()]
        };
        for (((what, reference), &o), &s) in names.iter().zip(&ours).zip(&sensitivity) {
            let what = if s > 0.0 {
                format!("{prefix}{what} (f32 input sensitivity {s:.1e})")
            } else {
                format!("{prefix}{what}")
            };
            let ours = f64::from(o);
            let ok = self.tally.compare(
                self.id,
                || what.clone(),
                ours,
                *reference,
                allowed(*reference) + s,
            );
            if !ok {
                return Err(Stop::Fail(format!(
                    "{what}: {ours} vs MuJoCo's {reference}"
                )));
            }
        }
        Ok(())
    }
}

fn error(e: sinew::Error) -> Stop {
    Stop::Fail(e.to_string())
}
