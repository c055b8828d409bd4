//! MuJoCo 4's stateful actuators (`mujoco-actuator-golden/v2`, MuJoCo
//! 4.0.0's own `mj_forward` and Euler `mj_step`): `<pid>` and `<dcmotor>`
//! (and `<general>` forms of them) on joints and fixed tendons, as single
//! steps from a written state and as 60-step episodes chained from their
//! initial state.
//!
//! Each case runs on one env of a plan with one group per actuator, a
//! [`MjPidCfg`](sinew::MjPidCfg) or [`MjDcMotorCfg`](sinew::MjDcMotorCfg)
//! built from the compiled parameters the file records, on a robot made of
//! the case's joints (with their `actuatorfrcrange`s) and fixed tendons
//! (with theirs), so the plan's force coupling scales, clamps and sums
//! exactly what MuJoCo does. A tendon column's length and velocity are
//! `Σ coef·q` of the case's joint state. Compared: each actuator's
//! `actuator_force`, `act_dot` and `act_next` per slot (by the slot names
//! MuJoCo lists), then each dof's `qfrc_actuator` (the joint efforts),
//! within [`MUJOCO_TOLERANCE`](super::MUJOCO_TOLERANCE). The mixed
//! `<general>` forms (a dcmotor gain on another dynamics or bias, a dcmotor
//! bias under another gain) are skipped with that reason.

use serde_json::Value;
use sinew::{
    ActuatorCfg, ActuatorCmd, Backend, CommandField, CtrlInputs, DcMotorBias, EnvIds, GroupCfg,
    MjDcMotorCfg, MjGeneralCfg, MjPidCfg, Plan, PlanOptions, Values,
};

use super::json::{arr, arr_at, bool_at, field, num, num_at, nums_at, str_at};
use super::mujoco::{bias_type, dyn_type, gain_type, literal, prm10, CaseRobot};
use super::{MakeBackend, Outcome, Stop, Tally, MUJOCO_TOLERANCE};

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

/// One actuator of a case: its slots and control inputs, in MuJoCo's order.
struct Member {
    slots: Vec<String>,
    inputs: Vec<String>,
    /// An [`MjGeneralCfg`] (a mixed `<general>` form): its ctrl column is
    /// its force, its one slot MuJoCo's activation, its control the effort
    /// command.
    general: bool,
}

fn run(case: &Value, id: &str, make: MakeBackend<'_>, tally: &mut Tally) -> Result<(), Stop> {
    let kind = str_at(case, "kind")?;
    let multi = kind == "multi";
    let timestep = match kind {
        "episode" => num_at(case, "timestep")?,
        _ => num_at(field(case, "inputs")?, "timestep")?,
    };
    let (params, specs): (Vec<&Value>, Vec<&Value>) = if multi {
        let (p, s) = (arr_at(case, "params")?, arr_at(case, "spec")?);
        if p.len() != s.len() {
            return Err(Stop::Fail("params and spec differ in length".into()));
        }
        (p.iter().collect(), s.iter().collect())
    } else {
        (vec![field(case, "params")?], vec![field(case, "spec")?])
    };
    let case_robot = CaseRobot::new(params.iter().copied())?;
    let mut groups = Vec::new();
    let mut members = Vec::new();
    for (i, ((p, spec), (transmission, target))) in params
        .iter()
        .zip(&specs)
        .zip(&case_robot.targets)
        .enumerate()
    {
        let actuator = actuator(p, timestep as f32)?;
        compile_check(spec, p, &actuator, timestep as f32, id, tally)?;
        let general = matches!(actuator, ActuatorCfg::MjGeneral(_));
        groups.push(
            GroupCfg::new(format!("a{i}"), [literal(target)], actuator)
                .with_transmission(*transmission),
        );
        // A general actuator's one control is MuJoCo's `ctrl` (undeclared:
        // null, or a declared name).
        let inputs = if general {
            vec!["ctrl".into()]
        } else {
            strings(p, "input_names")?
        };
        members.push(Member {
            slots: strings(p, "act_slots")?,
            inputs,
            general,
        });
    }
    let options = PlanOptions {
        timestep: timestep as f32,
        ..PlanOptions::default()
    };
    let plan = Plan::new(&case_robot.robot, groups, 1, options).map_err(error)?;
    let mut backend = make(plan).map_err(error)?;
    let dofs_of = |v: &Value| -> Result<Vec<u64>, Stop> {
        Ok(arr_at(v, "dofs")?
            .iter()
            .map(super::json::uint)
            .collect::<Result<Vec<_>, _>>()?)
    };
    let dofs = if multi {
        dofs_of(field(case, "inputs")?)?
    } else {
        dofs_of(field(params[0], "transmission")?)?
    };
    let columns = case_robot.columns(&dofs)?;
    // Each actuator's length along the case's dofs: (dof index, coef).
    let mut along = Vec::with_capacity(params.len());
    for p in &params {
        let t = field(p, "transmission")?;
        let coef = nums_at(t, "coef")?;
        let own = dofs_of(t)?;
        let pairs = own
            .iter()
            .zip(coef)
            .map(|(d, c)| match dofs.iter().position(|x| x == d) {
                Some(k) => Ok((k, c)),
                None => Err(Stop::Fail(format!("dof {d} is not among the case's dofs"))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        along.push(pairs);
    }
    let mut step = Step::new(backend.as_mut(), &members, &columns, along, tally, id)?;
    // A list per actuator: multi cases nest them, the others hold one.
    let per = |v: &Value, key: &str| -> Result<Vec<Vec<f64>>, Stop> {
        if multi {
            Ok(arr_at(v, key)?
                .iter()
                .map(super::json::nums)
                .collect::<Result<Vec<_>, _>>()?)
        } else {
            Ok(vec![nums_at(v, key)?])
        }
    };
    match kind {
        "single" | "multi" => {
            let i = field(case, "inputs")?;
            let o = field(case, "outputs")?;
            step.set_state(&per(i, "act")?)?;
            let force = if multi {
                nums_at(o, "actuator_force")?
            } else {
                vec![num_at(o, "actuator_force")?]
            };
            step.run(
                "",
                Inputs {
                    qpos: nums_at(i, "qpos")?,
                    qvel: nums_at(i, "qvel")?,
                    ctrl: per(i, "ctrl")?,
                },
                Expected {
                    force,
                    act_dot: per(o, "act_dot")?,
                    act_next: per(o, "act_next")?,
                    qfrc: nums_at(o, "qfrc_actuator")?,
                },
            )
        }
        "episode" => {
            step.set_state(&[nums_at(case, "act0")?])?;
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
                ("act_dot", &act_dot),
                ("act_next", &act_next),
                ("qfrc_actuator", &qfrc),
            ] {
                if rows.len() != n {
                    return Err(Stop::Fail(format!(
                        "steps.{name} has {} rows, not {n}",
                        rows.len()
                    )));
                }
            }
            for j in 0..n {
                step.run(
                    &format!("steps[{j}]."),
                    Inputs {
                        qpos: qpos[j].clone(),
                        qvel: qvel[j].clone(),
                        ctrl: vec![ctrl[j].clone()],
                    },
                    Expected {
                        force: force[j].clone(),
                        act_dot: vec![act_dot[j].clone()],
                        act_next: vec![act_next[j].clone()],
                        qfrc: qfrc[j].clone(),
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
                let inv: f64 = coef
                    .iter()
                    .zip(&m0)
                    .map(|(c, m)| (gear as f64 * c).powi(2) / m)
                    .sum();
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
        ("dcmotor", "dcmotor", bias @ ("dcmotor" | "none" | "affine")) => {
            if ctrl_ranges.windows(2).any(|w| w[0] != w[1]) {
                return Err(Stop::Skip(
                    "a dcmotor whose controls have different ranges".into(),
                ));
            }
            let mut m = MjDcMotorCfg::from_compiled(inputs, &gainprm, &dynprm, &biasprm, timestep);
            if bias != "dcmotor" {
                // biasprm is the affine bias's, not cogging and LuGre's.
                (m.cogging_amplitude, m.cogging_poles, m.cogging_phase) = (0.0, 0.0, 0.0);
                (m.tau_c, m.tau_s, m.omega_s) = (0.0, 0.0, 0.0);
            }
            if bias == "none" {
                m.bias_type = DcMotorBias::None;
            }
            if bias == "affine" {
                m.bias_type = DcMotorBias::Affine;
                let at = |k: usize| biasprm.get(k).copied().unwrap_or(0.0) as f32;
                m.affine_bias = [at(0), at(1), at(2)];
            }
            m.gear = gear;
            m.force_range = force_range;
            m.ctrl_range = ctrl_ranges
                .first()
                .copied()
                .unwrap_or([f32::NEG_INFINITY, f32::INFINITY]);
            Ok(m.into())
        }
        (d, g, b) => {
            let (Some(dyn_type), Some(gain_type), Some(bias_type)) =
                (dyn_type(d), gain_type(g), bias_type(b))
            else {
                return Err(Stop::Skip(format!(
                    "the <general> form (dyn {d}, gain {g}, bias {b})"
                )));
            };
            // A general actuator's one control is MuJoCo's `ctrl`; a dcmotor
            // gain's controller inputs need the MjDcMotor kind.
            if names.len() > 1 || names.iter().any(|n| *n != "voltage") {
                return Err(Stop::Skip(format!(
                    "a <general> form (dyn {d}, gain {g}, bias {b}) with the controls {names:?}"
                )));
            }
            let bounded = |r: [f32; 2]| r[0].is_finite().then_some(r);
            Ok(MjGeneralCfg {
                dyn_type,
                dynprm: prm10(p, "dynprm")?,
                gain_type,
                gainprm: prm10(p, "gainprm")?,
                bias_type,
                biasprm: prm10(p, "biasprm")?,
                ctrl_range: ctrl_ranges.first().copied().and_then(bounded),
                force_range: bounded(force_range),
                act_range: bounded(range("actrange", bool_at(p, "actlimited")?)?),
                act_early: bool_at(p, "actearly")?,
                gear,
                ..MjGeneralCfg::default()
            }
            .into())
        }
    }
}

/// MuJoCo's compile-time mapping: the element's MJCF attributes, compiled
/// by [`DcMotorMjcf`](sinew::DcMotorMjcf) or [`PidMjcf`](sinew::PidMjcf),
/// give the parameters MuJoCo compiled (each within 1e-6 relative; the
/// control inputs exactly). `<general>` elements write the arrays
/// themselves and have nothing to compile.
fn compile_check(
    spec: &Value,
    params: &Value,
    compiled: &ActuatorCfg,
    timestep: f32,
    id: &str,
    tally: &mut Tally,
) -> Result<(), Stop> {
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

/// One step's inputs: the case's joint state per dof and each actuator's
/// controls.
struct Inputs {
    qpos: Vec<f64>,
    qvel: Vec<f64>,
    ctrl: Vec<Vec<f64>>,
}

/// MuJoCo's outputs of one step: per actuator, then per dof.
struct Expected {
    force: Vec<f64>,
    act_dot: Vec<Vec<f64>>,
    act_next: Vec<Vec<f64>>,
    qfrc: Vec<f64>,
}

/// Where a control goes: a command field's column, or the `voltage` plane's.
#[derive(Clone, Copy, PartialEq)]
enum Slot {
    Field(usize, usize),
    Voltage(usize),
}

/// One case's backend and what it names.
struct Step<'a> {
    backend: &'a mut dyn Backend,
    members: &'a [Member],
    /// The joint (command column) of each of the case's dofs.
    columns: &'a [usize],
    /// Each actuator's length along the dofs: `(dof index, coef)`.
    along: Vec<Vec<(usize, f64)>>,
    /// Each actuator's target (command column) and ctrl column.
    targets: Vec<(usize, usize)>,
    /// Each actuator's controls' places, in its input order.
    controls: Vec<Vec<Slot>>,
    tally: &'a mut Tally,
    id: &'a str,
}

impl<'a> Step<'a> {
    fn new(
        backend: &'a mut dyn Backend,
        members: &'a [Member],
        columns: &'a [usize],
        along: Vec<Vec<(usize, f64)>>,
        tally: &'a mut Tally,
        id: &'a str,
    ) -> Result<Step<'a>, Stop> {
        let plan = backend.plan();
        let targets: Vec<(usize, usize)> = (plan.groups().iter())
            .map(|g| (g.cmd_columns[0], g.ctrl_columns[0]))
            .collect();
        let mut controls: Vec<Vec<Slot>> = Vec::new();
        for (m, &(column, _)) in members.iter().zip(&targets) {
            let mut own = Vec::new();
            for name in &m.inputs {
                let slot = match name.as_str() {
                    "pos" => Slot::Field(CommandField::Position as usize, column),
                    "vel" => Slot::Field(CommandField::Velocity as usize, column),
                    "ff" => Slot::Field(CommandField::Effort as usize, column),
                    "voltage" => Slot::Voltage(column),
                    "ctrl" => Slot::Field(CommandField::Effort as usize, column),
                    other => return Err(Stop::Skip(format!("control `{other}`"))),
                };
                if controls.iter().flatten().any(|s| *s == slot) {
                    return Err(Stop::Skip(
                        "two actuators on one target with the same control (Sinew's command has one \
                         of each field per target)"
                            .into(),
                    ));
                }
                own.push(slot);
            }
            controls.push(own);
        }
        Ok(Step {
            backend,
            members,
            columns,
            along,
            targets,
            controls,
            tally,
            id,
        })
    }

    fn group(i: usize) -> String {
        format!("a{i}")
    }

    /// Resets the env, then writes each actuator's slots.
    fn set_state(&mut self, act: &[Vec<f64>]) -> Result<(), Stop> {
        if act.len() != self.members.len()
            || (act.iter().zip(self.members)).any(|(a, m)| a.len() != m.slots.len())
        {
            return Err(Stop::Fail(
                "act does not list every actuator's slots".into(),
            ));
        }
        self.backend.reset(EnvIds::All).map_err(error)?;
        let act: Vec<f32> = act.iter().flatten().map(|&a| a as f32).collect();
        self.write_state(&act)
    }

    /// Writes every actuator's slots, in order.
    fn write_state(&mut self, act: &[f32]) -> Result<(), Stop> {
        let mut values = act.iter();
        for (i, m) in self.members.iter().enumerate() {
            for (name, &value) in m.slots.iter().zip(&mut values) {
                let (group, value) = (Self::group(i), Values::Scalar(value));
                (self.backend)
                    .set_state(&group, name, EnvIds::All, value)
                    .map_err(error)?;
            }
        }
        Ok(())
    }

    /// Actuator `i`'s slot `name` (`rate`: its `act_dot` this step) into `one`.
    fn slot(&mut self, i: usize, name: &str, rate: bool, one: &mut [f32; 1]) -> Result<(), Stop> {
        let (group, c) = (Self::group(i), self.targets[i].1);
        let b = &mut *self.backend;
        if !rate {
            return b.read_state(&group, name, one).map_err(error);
        }
        // A `<general>` actuator's rate is the MuJoCo stage's `act_dot`
        // plane; MuJoCo 4's kinds name a plane per slot.
        let plane = if self.members[i].general {
            sinew::ACT_DOT.name.to_owned()
        } else {
            format!("act_dot_{name}")
        };
        let mut row = vec![0.0f32; b.plan().num_ctrl()];
        b.read_output(&plane, &mut row).map_err(error)?;
        one[0] = row[c];
        Ok(())
    }

    /// Every actuator's slots, in order.
    fn read_state(&mut self) -> Result<Vec<f32>, Stop> {
        let mut one = [0.0f32];
        let mut out = Vec::new();
        for (i, m) in self.members.iter().enumerate() {
            for name in &m.slots {
                self.slot(i, name, false, &mut one)?;
                out.push(one[0]);
            }
        }
        Ok(out)
    }

    /// Steps once from `inputs` and reads, in order, each actuator's
    /// `actuator_force` and its slots' `act_dot` and `act_next`, then each
    /// dof's joint effort.
    fn outputs(&mut self, inputs: &Inputs) -> Result<Vec<f32>, Stop> {
        let plan = self.backend.plan();
        let (t, nc, nj) = (
            plan.num_targets(),
            plan.num_ctrl(),
            plan.mj().effort_width(),
        );
        let has_voltage = plan.input_planes().iter().any(|p| p.name == "voltage");
        let mut cmd = ActuatorCmd::zeros(1, t);
        for (k, &j) in self.columns.iter().enumerate() {
            cmd.pos[j] = inputs.qpos[k] as f32;
            cmd.vel[j] = inputs.qvel[k] as f32;
        }
        let mut voltage = vec![0.0f32; t];
        for (i, (&(column, _), along)) in self.targets.iter().zip(&self.along).enumerate() {
            let sum = |q: &[f64]| along.iter().map(|&(k, c)| c * q[k]).sum::<f64>();
            cmd.pos[column] = sum(&inputs.qpos) as f32;
            cmd.vel[column] = sum(&inputs.qvel) as f32;
            let ctrl = &inputs.ctrl[i];
            if ctrl.len() != self.controls[i].len() {
                return Err(Stop::Fail(format!(
                    "actuator {i} has {} controls, not {}",
                    ctrl.len(),
                    self.controls[i].len()
                )));
            }
            for (&slot, &u) in self.controls[i].iter().zip(ctrl) {
                match slot {
                    Slot::Field(f, c) => cmd.fields_mut()[f][c] = u as f32,
                    Slot::Voltage(c) => voltage[c] = u as f32,
                }
            }
        }
        if has_voltage {
            self.backend.set_input("voltage", &voltage).map_err(error)?;
        }
        self.backend.step(&cmd).map_err(error)?;
        if !self.backend.nonfinite_envs().map_err(error)?.is_empty() {
            return Err(Stop::Fail(
                "the step zeroed the env for a non-finite value".into(),
            ));
        }
        let mut ctrl = vec![0.0f32; nc];
        self.backend.read_ctrl(&mut ctrl).map_err(error)?;
        let mut force = vec![0.0f32; nc];
        if self.members.iter().any(|m| !m.general) {
            self.backend
                .read_output("actuator_force", &mut force)
                .map_err(error)?;
        }
        let mut out = Vec::new();
        let mut one = [0.0f32];
        for (i, m) in self.members.iter().enumerate() {
            let c = self.targets[i].1;
            out.push(if m.general { ctrl[c] } else { force[c] });
            for name in &m.slots {
                self.slot(i, name, true, &mut one)?;
                out.push(one[0]);
                self.slot(i, name, false, &mut one)?;
                out.push(one[0]);
            }
        }
        let mut effort = vec![0.0f32; nj];
        self.backend.read_joint_effort(&mut effort).map_err(error)?;
        out.extend(self.columns.iter().map(|&j| effort[j]));
        Ok(out)
    }

    /// How far each output moves when every input is nudged by its f32
    /// rounding (half an ulp, in four sign patterns), from the same state.
    /// The alternating patterns nudge a state opposite to its controls (an
    /// odd index beside even ones), where a uniform nudge would cancel in
    /// a difference such as `v/R − i`.
    fn sensitivity(
        &mut self,
        inputs: &Inputs,
        act: &[f32],
        ours: &[f32],
    ) -> Result<Vec<f64>, Stop> {
        let mut spread = vec![0.0f64; ours.len()];
        for pattern in 0..4u32 {
            let nudge = |x: f64, k: usize| super::mujoco::nudge(x, k as u32, pattern);
            let nudged = Inputs {
                qpos: (inputs.qpos.iter().enumerate())
                    .map(|(k, &q)| nudge(q, 2 * k))
                    .collect(),
                qvel: (inputs.qvel.iter().enumerate())
                    .map(|(k, &q)| nudge(q, 2 * k + 1))
                    .collect(),
                ctrl: (inputs.ctrl.iter().enumerate())
                    .map(|(i, c)| {
                        (c.iter().enumerate())
                            .map(|(k, &u)| nudge(u, 2 + 10 * i + k))
                            .collect()
                    })
                    .collect(),
            };
            let act: Vec<f32> = (act.iter().enumerate())
                .map(|(k, &a)| nudge(f64::from(a), 7 + k) as f32)
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
    fn run(&mut self, prefix: &str, inputs: Inputs, want: Expected) -> Result<(), Stop> {
        let n = self.members.len();
        let lists_slots = |v: &[Vec<f64>]| {
            v.len() == n && (v.iter().zip(self.members)).all(|(a, m)| a.len() == m.slots.len())
        };
        if want.force.len() != n || !lists_slots(&want.act_dot) || !lists_slots(&want.act_next) {
            return Err(Stop::Fail(format!(
                "{prefix}actuator_force, act_dot and act_next do not list every actuator's slots"
            )));
        }
        let dofs = self.columns.len();
        if inputs.qpos.len() != dofs || inputs.qvel.len() != dofs || want.qfrc.len() != dofs {
            return Err(Stop::Fail(format!(
                "{prefix}qpos, qvel and qfrc_actuator must list the {dofs} dofs"
            )));
        }
        let mut names = Vec::new();
        for (i, m) in self.members.iter().enumerate() {
            let who = if n > 1 {
                format!("[{i}]")
            } else {
                String::new()
            };
            names.push((format!("actuator_force{who}"), want.force[i]));
            for (k, slot) in m.slots.iter().enumerate() {
                names.push((format!("act_dot{who}[{k}] ({slot})"), want.act_dot[i][k]));
                names.push((format!("act_next{who}[{k}] ({slot})"), want.act_next[i][k]));
            }
        }
        for (k, &q) in want.qfrc.iter().enumerate() {
            names.push((format!("qfrc_actuator[{k}]"), q));
        }
        let act = self.read_state()?;
        let ours = self.outputs(&inputs)?;
        let allowed = |r: f64| MUJOCO_TOLERANCE * r.abs().max(1.0);
        let off = names
            .iter()
            .zip(&ours)
            .any(|((_, r), &o)| (f64::from(o) - r).abs() > allowed(*r));
        let sensitivity = if off {
            let after = self.read_state()?;
            let s = self.sensitivity(&inputs, &act, &ours)?;
            self.write_state(&after)?;
            s
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
