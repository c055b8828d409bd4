//! MIMo golden files (`mimo-actuation-golden/v1`, made by running MIMo's
//! own `MuscleModel` on its 44-actuator benchmark body): single muscle
//! updates, curve sweeps and env-step rollouts.
//!
//! Every case runs on one env of a 44-joint [`MimoMuscleCfg`] plan whose
//! parameters come from the file's `actuators` (joint range, spring
//! reference, MIMo's `user` data) and the case's timestep. A single case
//! writes the activities, sets the targets and steps once. A rollout
//! replays MIMo's call sequence per env step: one step with the state at
//! the start of the env step (`action()`'s update), then one per physics
//! substep with the joint state that substep read, the activations
//! chained by the backend's own state. Compared: the targets, the
//! activations, the forces `F` (the backend's `F·fmax` over `fmax`) and
//! MIMo's observations, the joint torque (and `qfrc_actuator`, equal to it
//! in MIMo), the cost (from the backend's cost terms); the fibre lengths,
//! their rates and the three curves through the shared scalar functions
//! ([`sinew::mimo::muscle_state`]) at the same inputs; the curve sweeps
//! through [`sinew::mimo::force_length`], `force_velocity`, `force_passive`
//! and `bump`.

use serde_json::Value;
use sinew::mimo::{self, MimoMuscleCfg, MimoPositionalCfg, MimoSpringDamperCfg};
use sinew::{ActuatorCmd, Backend, EnvIds, GroupCfg, Plan, PlanOptions, Robot, Values};

use super::json::{arr_at, field, num, num_at, str_at};
use super::{MakeBackend, Outcome, Stop, Tally};

/// The bar: `|ours − MIMo| ≤ 1e-5 · max(1, |MIMo|)` on every compared
/// value, Sinew in f32 against MIMo's f64.
pub const MIMO_TOLERANCE: f64 = 1e-5;

/// The group of every plan built here.
const GROUP: &str = "mimo";

/// One actuator's parameters from the header.
struct Actuator {
    joint: String,
    range: [f64; 2],
    springref: f64,
    user: [f64; 3],
    gear: f64,
    /// MIMo's float32 action-space bounds (spring-damper, positional).
    action_space: Option<[f64; 2]>,
}

/// Which of MIMo's models a file exercises (from its `file` field).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Model {
    Muscle,
    SpringDamper,
    Positional,
}

/// State across the cases of one file: the header's actuators and the
/// backend (one env × 44 joints), built on first use.
pub(super) struct Verifier {
    model: Model,
    actuators: Result<Vec<Actuator>, String>,
    /// Positional files: each constraint's joint and the actuator whose
    /// target MIMo writes into it.
    constraints: Result<Vec<(String, usize)>, String>,
    tau: f64,
    backend: Option<Box<dyn Backend>>,
    /// What the report should say besides pass and fail.
    pub notes: Vec<String>,
}

impl Verifier {
    pub fn new(doc: &Value) -> Verifier {
        let actuators = arr_at(doc, "actuators").and_then(|list| {
            list.iter()
                .map(|a| {
                    let pair = |key: &str| -> Result<Vec<f64>, String> {
                        arr_at(a, key)?.iter().map(num).collect()
                    };
                    let (range, user) = (pair("jnt_range")?, pair("user")?);
                    if range.len() != 2 || user.len() != 3 {
                        return Err("an actuator's jnt_range or user has the wrong length".into());
                    }
                    let action_space = match a.get("action_space") {
                        None => None,
                        Some(_) => match pair("action_space")?[..] {
                            [lo, hi] => Some([lo, hi]),
                            _ => return Err("an actuator's action_space is not [low, high]".into()),
                        },
                    };
                    Ok(Actuator {
                        joint: str_at(a, "joint")?.to_owned(),
                        range: [range[0], range[1]],
                        springref: num_at(a, "qpos_spring")?,
                        user: [user[0], user[1], user[2]],
                        gear: num_at(a, "gear")?,
                        action_space,
                    })
                })
                .collect()
        });
        let tau = field(doc, "constants")
            .and_then(|c| num_at(c, "tau"))
            .unwrap_or(f64::from(mimo::TAU));
        let model = match doc.get("file").and_then(Value::as_str) {
            Some(f) if f.starts_with("spring_damper") => Model::SpringDamper,
            Some(f) if f.starts_with("positional") => Model::Positional,
            _ => Model::Muscle,
        };
        let constraints = match model {
            Model::Positional => arr_at(doc, "constraints").and_then(|list| {
                list.iter()
                    .map(|c| {
                        let k = num_at(c, "driven_by_actuator")?;
                        Ok((str_at(c, "joint")?.to_owned(), k as usize))
                    })
                    .collect()
            }),
            _ => Ok(Vec::new()),
        };
        Verifier {
            model,
            actuators,
            constraints,
            tau,
            backend: None,
            notes: Vec::new(),
        }
    }

    pub fn run_case(
        &mut self,
        case: &Value,
        id: &str,
        make: MakeBackend<'_>,
        tally: &mut Tally,
    ) -> Outcome {
        let result = match str_at(case, "kind") {
            Ok("single") => self.single(case, id, make, tally),
            Ok("rollout") => match self.model {
                Model::Muscle => self.rollout(case, id, make, tally),
                Model::SpringDamper => self.spring_damper(case, id, make, tally),
                Model::Positional => self.positional(case, id, make, tally),
            },
            Ok("curve") => curve(case, id, tally),
            Ok(other) => Err(Stop::Fail(format!("unknown case kind `{other}`"))),
            Err(e) => Err(Stop::Fail(e)),
        };
        match result {
            Ok(()) => Outcome::Passed,
            Err(stop) => stop.into(),
        }
    }

    /// Builds the backend on first use, then resets it and writes every
    /// parameter from the header and the case's timestep.
    fn prepare(&mut self, timestep: f64, make: MakeBackend<'_>) -> Result<(), Stop> {
        let acts = self
            .actuators
            .as_deref()
            .map_err(|e| Stop::Fail(e.clone()))?;
        let per = |f: &dyn Fn(&Actuator) -> f64| -> Vec<f32> {
            acts.iter().map(|a| f(a) as f32).collect()
        };
        let space = |k: usize| move |a: &Actuator| a.action_space.map_or(f64::NAN, |s| s[k]);
        let (cfg, params): (sinew::ActuatorCfg, Vec<(&str, Vec<f32>)>) = match self.model {
            Model::Muscle => (
                <MimoMuscleCfg as sinew::Kind>::example().into(),
                vec![
                    ("range_lo", per(&|a| a.range[0])),
                    ("range_hi", per(&|a| a.range[1])),
                    ("springref", per(&|a| a.springref)),
                    ("vmax", per(&|a| a.user[0])),
                    ("fmax_neg", per(&|a| a.user[1])),
                    ("fmax_pos", per(&|a| a.user[2])),
                    ("timestep", vec![timestep as f32; acts.len()]),
                    ("tau", vec![self.tau as f32; acts.len()]),
                ],
            ),
            Model::SpringDamper => (
                <MimoSpringDamperCfg as sinew::Kind>::example().into(),
                vec![
                    ("gear", per(&|a| a.gear)),
                    ("action_lo", per(&space(0))),
                    ("action_hi", per(&space(1))),
                ],
            ),
            Model::Positional => (
                <MimoPositionalCfg as sinew::Kind>::example().into(),
                vec![("range_lo", per(&space(0))), ("range_hi", per(&space(1)))],
            ),
        };
        if self.backend.is_none() {
            let robot = Robot::from_joints(acts.iter().map(|a| a.joint.clone()));
            let names: Vec<String> = acts
                .iter()
                .map(|a| super::mujoco::literal(&a.joint))
                .collect();
            let group = GroupCfg::new(GROUP, names, cfg);
            let plan = Plan::new(&robot, vec![group], 1, PlanOptions::default()).map_err(error)?;
            self.backend = Some(make(plan).map_err(error)?);
        }
        let backend = self.backend.as_deref_mut().expect("built above");
        backend.reset(EnvIds::All).map_err(error)?;
        for (name, values) in &params {
            backend
                .set_param(GROUP, name, EnvIds::All, Values::PerEnvTarget(values))
                .map_err(error)?;
        }
        Ok(())
    }

    /// The actuators and the prepared backend, borrowed together.
    fn parts(&mut self) -> Result<(&[Actuator], &mut dyn Backend), Stop> {
        let acts = self
            .actuators
            .as_deref()
            .map_err(|e| Stop::Fail(e.clone()))?;
        let backend = self
            .backend
            .as_deref_mut()
            .ok_or_else(|| Stop::Fail("no backend".into()))?;
        Ok((acts, backend))
    }

    /// One `MuscleModel.action(action)` call on a written state.
    fn single(
        &mut self,
        case: &Value,
        id: &str,
        make: MakeBackend<'_>,
        tally: &mut Tally,
    ) -> Result<(), Stop> {
        let inputs = field(case, "inputs")?;
        let outputs = field(case, "outputs")?;
        self.prepare(num_at(inputs, "timestep")?, make)?;
        let (acts, backend) = self.parts()?;
        let n = acts.len();
        let activity = vec_at(inputs, "activity", 2 * n)?;
        for (k, name) in ["activation_neg", "activation_pos"].into_iter().enumerate() {
            let values: Vec<f32> = activity[k * n..(k + 1) * n]
                .iter()
                .map(|&a| a as f32)
                .collect();
            backend
                .set_state(GROUP, name, EnvIds::All, Values::PerEnvTarget(&values))
                .map_err(error)?;
        }
        let step = Update::run(backend, inputs, inputs, n)?;
        let mut ctx = Compare {
            tally,
            id,
            prefix: String::new(),
        };
        ctx.targets(&vec_at(inputs, "action", 2 * n)?, outputs)?;
        ctx.update(&step, &muscles(acts, inputs)?, outputs, true)?;
        ctx.values(
            "qfrc_actuator",
            &step.torque,
            &vec_at(outputs, "qfrc_actuator", n)?,
        )
    }

    /// MIMo's env steps: `action()`'s update, then one per substep.
    fn rollout(
        &mut self,
        case: &Value,
        id: &str,
        make: MakeBackend<'_>,
        tally: &mut Tally,
    ) -> Result<(), Stop> {
        self.prepare(num_at(case, "timestep")?, make)?;
        let (acts, backend) = self.parts()?;
        let n = acts.len();
        for (s, step) in arr_at(case, "steps")?.iter().enumerate() {
            let action = vec_at(step, "action", 2 * n)?;
            let substeps = arr_at(step, "substeps")?;
            let first = substeps
                .first()
                .ok_or_else(|| Stop::Fail("a step with no substeps".into()))?;
            let update = field(step, "action_update")?;
            let ours = Update::run(backend, step, first, n)?;
            let mut ctx = Compare {
                tally: &mut *tally,
                id,
                prefix: format!("steps[{s}].action_update."),
            };
            ctx.targets(&action, update)?;
            ctx.values(
                "activity",
                &ours.activity,
                &vec_at(update, "activity", 2 * n)?,
            )?;
            ctx.values(
                "joint_torque",
                &ours.torque,
                &vec_at(update, "joint_torque", n)?,
            )?;
            for (k, sub) in substeps.iter().enumerate() {
                let ours = Update::run(backend, step, sub, n)?;
                let mut ctx = Compare {
                    tally: &mut *tally,
                    id,
                    prefix: format!("steps[{s}].substeps[{k}]."),
                };
                ctx.update(&ours, &muscles(acts, sub)?, sub, false)?;
                ctx.values(
                    "qfrc_actuator",
                    &ours.torque,
                    &vec_at(sub, "qfrc_actuator", n)?,
                )?;
            }
        }
        Ok(())
    }
}

impl Verifier {
    /// SpringDamperModel env steps: the clipped action as ctrl, MIMo's
    /// observations `[u, gear·u]` and its cost. The spring, the damper and
    /// MuJoCo's own force clamp are the simulator's, not compared.
    fn spring_damper(
        &mut self,
        case: &Value,
        id: &str,
        make: MakeBackend<'_>,
        tally: &mut Tally,
    ) -> Result<(), Stop> {
        self.prepare(num_at(case, "timestep")?, make)?;
        let (acts, backend) = self.parts()?;
        let n = acts.len();
        let gear: Vec<f32> = acts.iter().map(|a| a.gear as f32).collect();
        for (s, step) in arr_at(case, "steps")?.iter().enumerate() {
            let mut cmd = ActuatorCmd::zeros(1, n);
            cmd.effort_target = f32s(&vec_at(step, "action", n)?);
            let u = step_once(backend, &cmd, n)?;
            let mut torque = vec![0.0; n];
            backend
                .read_output("mimo_torque", &mut torque)
                .map_err(error)?;
            let mut terms = vec![0.0; n];
            backend
                .read_output("mimo_cost", &mut terms)
                .map_err(error)?;
            let mut ctx = Compare {
                tally: &mut *tally,
                id,
                prefix: format!("steps[{s}]."),
            };
            ctx.values("control_input", &u, &vec_at(step, "control_input", n)?)?;
            ctx.values("ctrl", &u, &vec_at(step, "ctrl", n)?)?;
            let mut obs = u.clone();
            obs.extend_from_slice(&torque);
            ctx.values("observations", &obs, &vec_at(step, "observations", 2 * n)?)?;
            let cost = terms.iter().sum::<f32>() / (n as f32 * gear.iter().sum::<f32>());
            ctx.value("cost", None, f64::from(cost), num_at(step, "cost")?)?;
        }
        Ok(())
    }

    /// PositionalModel env steps: the clipped targets (ctrl, observations)
    /// and the value each of MIMo's joint constraints holds. MIMo writes
    /// actuator `k`'s target into its `k`-th constraint in equality-id
    /// order, which for two hip joints is another joint's lock; Sinew gives
    /// each target to its own joint. The comparison applies MIMo's
    /// permutation (constraint `k` against actuator `k`'s target) and the
    /// report names the joints it moves.
    fn positional(
        &mut self,
        case: &Value,
        id: &str,
        make: MakeBackend<'_>,
        tally: &mut Tally,
    ) -> Result<(), Stop> {
        self.prepare(0.0, make)?;
        let constraints = self.constraints.clone().map_err(Stop::Fail)?;
        let (acts, backend) = self.parts()?;
        let n = acts.len();
        let mut swapped = Vec::new();
        for (k, (joint, actuator)) in constraints.iter().enumerate() {
            let own = acts.get(*actuator).ok_or_else(|| {
                Stop::Fail(format!("constraint {k} names actuator {actuator} of {n}"))
            })?;
            if own.joint != *joint {
                swapped.push(format!(
                    "constraint {k}: MIMo locks {joint} at the target of {}'s actuator; \
                     Sinew gives that target to {} itself",
                    own.joint, own.joint
                ));
            }
        }
        for (s, step) in arr_at(case, "steps")?.iter().enumerate() {
            let mut cmd = ActuatorCmd::zeros(1, n);
            cmd.position_target = f32s(&vec_at(step, "action", n)?);
            let u = step_once(backend, &cmd, n)?;
            let mut ctx = Compare {
                tally: &mut *tally,
                id,
                prefix: format!("steps[{s}]."),
            };
            ctx.values("control_input", &u, &vec_at(step, "control_input", n)?)?;
            ctx.values("observations", &u, &vec_at(step, "observations", n)?)?;
            let held: Vec<f32> = constraints.iter().map(|&(_, a)| u[a]).collect();
            ctx.values(
                "eq_data0",
                &held,
                &vec_at(step, "eq_data0", constraints.len())?,
            )?;
        }
        for note in swapped {
            if !self.notes.contains(&note) {
                self.notes.push(note);
            }
        }
        Ok(())
    }
}

/// One step of a one-env plan; its ctrl.
fn step_once(backend: &mut dyn Backend, cmd: &ActuatorCmd, n: usize) -> Result<Vec<f32>, Stop> {
    backend.step(cmd).map_err(error)?;
    if !backend.nonfinite_envs().map_err(error)?.is_empty() {
        return Err(Stop::Fail(
            "the step zeroed the env for a non-finite value".into(),
        ));
    }
    let mut ctrl = vec![0.0; n];
    backend.read_ctrl(&mut ctrl).map_err(error)?;
    Ok(ctrl)
}

fn f32s(v: &[f64]) -> Vec<f32> {
    v.iter().map(|&x| x as f32).collect()
}

/// Each muscle's `(m, ref, vmax, fmax, phi, dq)` at a recorded joint state,
/// muscle 1 of every actuator, then muscle 2.
fn muscles(acts: &[Actuator], state: &Value) -> Result<Vec<[f32; 6]>, Stop> {
    let n = acts.len();
    let (q, dq) = (vec_at(state, "qpos", n)?, vec_at(state, "qvel", n)?);
    let mut out = vec![[0.0; 6]; 2 * n];
    for (j, a) in acts.iter().enumerate() {
        let qs = a.springref as f32;
        let [m1, r1, m2, r2] =
            mimo::muscle_parametrization(a.range[0] as f32, a.range[1] as f32, qs);
        let phi = q[j] as f32 - qs;
        out[j] = [
            m1,
            r1,
            a.user[0] as f32,
            a.user[1] as f32,
            phi,
            dq[j] as f32,
        ];
        out[n + j] = [
            m2,
            r2,
            a.user[0] as f32,
            a.user[2] as f32,
            phi,
            dq[j] as f32,
        ];
    }
    Ok(out)
}

/// One step's results read back from the backend.
struct Update {
    /// MIMo's muscle order: muscle 1 of every joint, then muscle 2.
    activity: Vec<f32>,
    /// `F·fmax`, same order.
    force_fmax: Vec<f32>,
    torque: Vec<f32>,
    cost_terms: Vec<f32>,
}

impl Update {
    /// Sets the targets from `step["action"]`, the joint state from
    /// `state`, steps once and reads back.
    fn run(
        backend: &mut dyn Backend,
        step: &Value,
        state: &Value,
        n: usize,
    ) -> Result<Update, Stop> {
        let action = vec_at(step, "action", 2 * n)?;
        backend
            .set_input("muscle_target_neg", &f32s(&action[..n]))
            .map_err(error)?;
        backend
            .set_input("muscle_target_pos", &f32s(&action[n..]))
            .map_err(error)?;
        let mut cmd = ActuatorCmd::zeros(1, n);
        cmd.pos = f32s(&vec_at(state, "qpos", n)?);
        cmd.vel = f32s(&vec_at(state, "qvel", n)?);
        backend.step(&cmd).map_err(error)?;
        if !backend.nonfinite_envs().map_err(error)?.is_empty() {
            return Err(Stop::Fail(
                "the step zeroed the env for a non-finite value".into(),
            ));
        }
        let read = |backend: &mut dyn Backend, names: [&str; 2]| -> Result<Vec<f32>, Stop> {
            let mut out = vec![0.0; 2 * n];
            let (a, b) = out.split_at_mut(n);
            backend.read_output(names[0], a).map_err(error)?;
            backend.read_output(names[1], b).map_err(error)?;
            Ok(out)
        };
        let activity = read(backend, ["muscle_activation_neg", "muscle_activation_pos"])?;
        let force_fmax = read(backend, ["muscle_force_neg", "muscle_force_pos"])?;
        let mut torque = vec![0.0; n];
        backend.read_ctrl(&mut torque).map_err(error)?;
        let mut cost_terms = vec![0.0; n];
        backend
            .read_output("muscle_cost", &mut cost_terms)
            .map_err(error)?;
        Ok(Update {
            activity,
            force_fmax,
            torque,
            cost_terms,
        })
    }
}

/// Comparisons of one case, named with a prefix.
struct Compare<'a> {
    tally: &'a mut Tally,
    id: &'a str,
    prefix: String,
}

impl Compare<'_> {
    fn value(
        &mut self,
        what: &str,
        i: Option<usize>,
        ours: f64,
        reference: f64,
    ) -> Result<(), Stop> {
        let allowed = MIMO_TOLERANCE * reference.abs().max(1.0);
        let name = || match i {
            Some(i) => format!("{}{what}[{i}]", self.prefix),
            None => format!("{}{what}", self.prefix),
        };
        if self.tally.compare(self.id, name, ours, reference, allowed) {
            Ok(())
        } else {
            Err(Stop::Fail(format!(
                "{}: {ours} vs MIMo's {reference}",
                name()
            )))
        }
    }

    fn values(&mut self, what: &str, ours: &[f32], reference: &[f64]) -> Result<(), Stop> {
        for (i, (&o, &r)) in ours.iter().zip(reference).enumerate() {
            self.value(what, Some(i), f64::from(o), r)?;
        }
        Ok(())
    }

    /// MIMo's targets, `clip(clip(action, -0.0, 1.0), 0, 1)`, against the
    /// clip the law applies (its own input clip, evaluated here).
    fn targets(&mut self, action: &[f64], outputs: &Value) -> Result<(), Stop> {
        let ours: Vec<f32> = action
            .iter()
            .map(|&a| sinew::clip(a as f32, 0.0, 1.0))
            .collect();
        self.values(
            "target_activity",
            &ours,
            &vec_at(outputs, "target_activity", action.len())?,
        )
    }

    /// Activations, forces, curves, torque, cost and (with `observations`)
    /// MIMo's observation vector.
    fn update(
        &mut self,
        ours: &Update,
        muscles: &[[f32; 6]],
        reference: &Value,
        observations: bool,
    ) -> Result<(), Stop> {
        let m = muscles.len();
        self.values(
            "activity",
            &ours.activity,
            &vec_at(reference, "activity", m)?,
        )?;
        let mut force = Vec::with_capacity(m);
        let mut parts: [Vec<f32>; 5] = Default::default();
        for (k, &[arm, lce_ref, vmax, fmax, phi, dq]) in muscles.iter().enumerate() {
            let s = mimo::muscle_state(arm, lce_ref, vmax, phi, dq, ours.activity[k]);
            for (part, v) in parts.iter_mut().zip([s.lce, s.lce_dot, s.fl, s.fv, s.fp]) {
                part.push(v);
            }
            // The backend's F, where its fmax lets it show.
            force.push(if fmax != 0.0 {
                ours.force_fmax[k] / fmax
            } else {
                s.force
            });
        }
        for (name, values) in ["lce", "lce_dot", "fl", "fv", "fp"].into_iter().zip(&parts) {
            self.values(name, values, &vec_at(reference, name, m)?)?;
        }
        self.values("force", &force, &vec_at(reference, "force", m)?)?;
        self.values(
            "joint_torque",
            &ours.torque,
            &vec_at(reference, "joint_torque", m / 2)?,
        )?;
        let fmax: Vec<[f32; 2]> = (0..m / 2)
            .map(|j| [muscles[j][3], muscles[m / 2 + j][3]])
            .collect();
        let cost = mimo::mimo_muscle_cost(&ours.cost_terms, &fmax);
        self.value("cost", None, f64::from(cost), num_at(reference, "cost")?)?;
        if observations {
            let mut obs = ours.activity.clone();
            obs.extend_from_slice(&ours.force_fmax);
            self.values(
                "observations",
                &obs,
                &vec_at(reference, "observations", 2 * m)?,
            )?;
        }
        Ok(())
    }
}

/// A curve sweep through the shared scalar functions.
fn curve(case: &Value, id: &str, tally: &mut Tally) -> Result<(), Stop> {
    let function = str_at(case, "function")?;
    let (x, y) = (arr_at(case, "x")?, arr_at(case, "y")?);
    if x.len() != y.len() {
        return Err(Stop::Fail("x and y differ in length".into()));
    }
    let f: Box<dyn Fn(f32) -> f32> = match function {
        "fl" => Box::new(mimo::force_length),
        "fp" => Box::new(mimo::force_passive),
        "fv" => {
            let vmax = num_at(case, "vmax")? as f32;
            Box::new(move |v| mimo::force_velocity(v / vmax))
        }
        "bump" => {
            let args = field(case, "args")?;
            let (a, mid, b) = (
                num_at(args, "a")? as f32,
                num_at(args, "mid")? as f32,
                num_at(args, "b")? as f32,
            );
            Box::new(move |l| mimo::bump(l, a, mid, b))
        }
        other => return Err(Stop::Skip(format!("curve `{other}` is not one of MIMo's"))),
    };
    let mut ctx = Compare {
        tally,
        id,
        prefix: format!("{function}."),
    };
    for (i, (x, y)) in x.iter().zip(y).enumerate() {
        let (x, y) = (num(x)?, num(y)?);
        ctx.value("y", Some(i), f64::from(f(x as f32)), y)?;
    }
    Ok(())
}

/// `v[key]` as `len` numbers.
fn vec_at(v: &Value, key: &str, len: usize) -> Result<Vec<f64>, Stop> {
    let values: Vec<f64> = arr_at(v, key)?.iter().map(num).collect::<Result<_, _>>()?;
    if values.len() != len {
        return Err(Stop::Fail(format!(
            "`{key}` has {} values, not {len}",
            values.len()
        )));
    }
    Ok(values)
}

fn error(e: sinew::Error) -> Stop {
    Stop::Fail(e.to_string())
}
