//! MuJoCo golden cases (`mujoco-actuator-golden/v1`): one `mj_forward` plus
//! one Euler `mj_step` of MuJoCo 4.0.0 per case, replayed as one Sinew step.

use serde_json::Value;
use sinew::{
    ActuatorCmd, BiasType, CommandField, DynType, EnvIds, FixedTendon, GainType, GroupCfg,
    MjGeneralCfg, Plan, PlanOptions, Robot, Transmission, Values,
};

use super::json::{
    arr_at, bool_at, field, limited_pair, num, num_at, nums_at, pair, pair_at, str_at, string,
};
use super::{MakeBackend, Outcome, Stop, Tally};

/// The bar: `|ours − MuJoCo| ≤ 1e-5 · max(1, |MuJoCo|)` for
/// `actuator_force`, `act_dot`, `act_next` and `qfrc_actuator`, with Sinew
/// in f32 against MuJoCo's f64. A value past it passes only within its
/// sensitivity to the f32 rounding of the step's own inputs (every input
/// nudged by half an ulp, four sign patterns), printed beside it.
pub const MUJOCO_TOLERANCE: f64 = 1e-5;

/// Input `x` (the `k`-th of a step) moved by its f32 rounding, half an ulp,
/// up or down by sign pattern `pattern` (0: all up, 1: all down, 2 and 3:
/// alternating), for the sensitivity of [`MUJOCO_TOLERANCE`].
pub(super) fn nudge(x: f64, k: u32, pattern: u32) -> f64 {
    const HALF_ULP: f64 = 1.0 / (1u64 << 24) as f64;
    let up = match pattern {
        0 => true,
        1 => false,
        _ => (k + pattern).is_multiple_of(2),
    };
    x * if up { 1.0 + HALF_ULP } else { 1.0 - HALF_ULP }
}

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

/// One actuator of a case, with its inputs and MuJoCo's outputs.
struct Actuator<'a> {
    params: &'a Value,
    ctrl: f64,
    act: Option<f64>,
    force: f64,
    act_dot: Option<f64>,
    act_next: Option<f64>,
}

fn opt_num(v: &Value) -> Result<Option<f64>, String> {
    if v.is_null() {
        Ok(None)
    } else {
        num(v).map(Some)
    }
}

pub(super) fn dyn_type(name: &str) -> Option<DynType> {
    Some(match name {
        "none" => DynType::None,
        "integrator" => DynType::Integrator,
        "filter" => DynType::Filter,
        "filterexact" => DynType::FilterExact,
        "muscle" => DynType::Muscle,
        _ => return None,
    })
}

pub(super) fn gain_type(name: &str) -> Option<GainType> {
    Some(match name {
        "fixed" => GainType::Fixed,
        "affine" => GainType::Affine,
        "muscle" => GainType::Muscle,
        "dcmotor" => GainType::DcMotor,
        _ => return None,
    })
}

pub(super) fn bias_type(name: &str) -> Option<BiasType> {
    Some(match name {
        "none" => BiasType::None,
        "affine" => BiasType::Affine,
        "muscle" => BiasType::Muscle,
        "dcmotor" => BiasType::DcMotor,
        _ => return None,
    })
}

pub(super) fn prm10(p: &Value, key: &str) -> Result<[f32; 10], String> {
    let values = nums_at(p, key)?;
    let mut out = [0.0f32; 10];
    for (o, v) in out.iter_mut().zip(&values) {
        *o = *v as f32;
    }
    Ok(out)
}

/// The [`MjGeneralCfg`] of one actuator's compiled fields as the MuJoCo
/// golden files store them (`params`: `dyntype`, `gainprm`, …); the error
/// says which field is missing or out of scope.
pub fn compiled_general(params: &Value) -> Result<MjGeneralCfg, String> {
    general_of(params).map_err(|stop| match stop {
        Stop::Skip(reason) | Stop::Fail(reason) => reason,
    })
}

fn general_of(p: &Value) -> Result<MjGeneralCfg, Stop> {
    let kind = |key: &str| str_at(p, key).map_err(Stop::Fail);
    let skip = |key: &str, name: &str| {
        Stop::Skip(format!(
            "{key} `{name}` is out of scope (Sinew models none/integrator/filter/filterexact/muscle \
             dynamics and fixed/affine/muscle/dcmotor gain and bias)"
        ))
    };
    let dyn_name = kind("dyntype")?;
    let gain_name = kind("gaintype")?;
    let bias_name = kind("biastype")?;
    Ok(MjGeneralCfg {
        command_field: CommandField::Effort,
        dyn_type: dyn_type(dyn_name).ok_or_else(|| skip("dyntype", dyn_name))?,
        dynprm: prm10(p, "dynprm")?,
        gain_type: gain_type(gain_name).ok_or_else(|| skip("gaintype", gain_name))?,
        gainprm: prm10(p, "gainprm")?,
        bias_type: bias_type(bias_name).ok_or_else(|| skip("biastype", bias_name))?,
        biasprm: prm10(p, "biasprm")?,
        ctrl_range: limited_pair(p, "ctrllimited", "ctrlrange")?,
        force_range: limited_pair(p, "forcelimited", "forcerange")?,
        act_range: limited_pair(p, "actlimited", "actrange")?,
        act_early: bool_at(p, "actearly")?,
        gear: num_at(p, "gear")? as f32,
        length_range: pair_at(p, "lengthrange")?,
        acc0: num_at(p, "acc0")? as f32,
    })
}

/// A regex that matches exactly `name` (groups match their regexes in full).
pub(super) fn literal(name: &str) -> String {
    name.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$#&-~".contains(c);
            special.then_some('\\').into_iter().chain([c])
        })
        .collect()
}

/// The robot of a case's actuators: the joints of their transmissions in
/// dof order (with their `actuatorfrcrange`s), their fixed tendons (with
/// theirs) and their bodies (as sites); and each actuator's transmission
/// and target.
pub(super) struct CaseRobot {
    pub robot: Robot,
    pub targets: Vec<(Transmission, String)>,
    joint_of_dof: Vec<(u64, String)>,
}

impl CaseRobot {
    /// From each actuator's compiled `params`.
    pub fn new<'a>(params: impl Iterator<Item = &'a Value>) -> Result<CaseRobot, Stop> {
        let mut joint_of_dof: Vec<(u64, String)> = Vec::new();
        let mut robot = Robot::default();
        let mut targets = Vec::new();
        for p in params {
            let trn = field(p, "transmission")?;
            let joints = arr_at(trn, "joints")?;
            let trn_dofs = arr_at(trn, "dofs")?;
            let limited = arr_at(trn, "jnt_actfrclimited")?;
            let ranges = arr_at(trn, "jnt_actfrcrange")?;
            for (k, (joint, dof)) in joints.iter().zip(trn_dofs).enumerate() {
                let (joint, dof) = (string(joint)?.to_owned(), super::json::uint(dof)?);
                if !joint_of_dof.iter().any(|(d, _)| *d == dof) {
                    joint_of_dof.push((dof, joint.clone()));
                    let lim = limited.get(k).and_then(Value::as_bool).unwrap_or(false);
                    if lim {
                        let r = pair(ranges.get(k).ok_or("jnt_actfrcrange is short".to_owned())?)?;
                        robot.joint_actuator_force_ranges.push((joint, r));
                    }
                }
            }
            let target = str_at(trn, "target")?.to_owned();
            let transmission = match str_at(trn, "type")? {
                "joint" => Transmission::Joint,
                "tendon" => {
                    if !robot.tendons.contains(&target) {
                        robot.tendons.push(target.clone());
                        let coefs = nums_at(trn, "coef")?;
                        let names = joints
                            .iter()
                            .map(|j| string(j).map(str::to_owned))
                            .collect::<Result<Vec<_>, _>>()?;
                        let actuator_force_range =
                            limited_pair(trn, "tendon_actfrclimited", "tendon_actfrcrange")?;
                        robot.fixed_tendons.push(FixedTendon {
                            name: target.clone(),
                            joints: names
                                .into_iter()
                                .zip(coefs.iter().map(|&c| c as f32))
                                .collect(),
                            actuator_force_range,
                        });
                    }
                    Transmission::Tendon
                }
                // A body transmission (adhesion): length and velocity 0, no joint effort.
                "body" => {
                    if !robot.sites.contains(&target) {
                        robot.sites.push(target.clone());
                    }
                    Transmission::Site
                }
                other => {
                    return Err(Stop::Skip(format!(
                        "{other} transmissions are out of scope"
                    )))
                }
            };
            targets.push((transmission, target));
        }
        joint_of_dof.sort_by_key(|(d, _)| *d);
        robot.joints = joint_of_dof.iter().map(|(_, j)| j.clone()).collect();
        Ok(CaseRobot {
            robot,
            targets,
            joint_of_dof,
        })
    }

    /// The joint (command column) of each of `dofs`.
    pub fn columns(&self, dofs: &[u64]) -> Result<Vec<usize>, Stop> {
        dofs.iter()
            .map(|dof| {
                let name = &(self.joint_of_dof.iter())
                    .find(|(d, _)| d == dof)
                    .ok_or_else(|| {
                        Stop::Fail(format!("dof {dof} belongs to no actuator's transmission"))
                    })?
                    .1;
                Ok(self.robot.joint_index(name).expect("listed in new"))
            })
            .collect()
    }
}

fn run(case: &Value, id: &str, make: MakeBackend<'_>, tally: &mut Tally) -> Result<(), Stop> {
    let inputs = field(case, "inputs")?;
    let outputs = field(case, "outputs")?;
    let timestep = num_at(inputs, "timestep")?;
    // Normalize single and multi cases to lists over actuators and dofs.
    let (actuators, dofs, qpos, qvel, qfrc): (Vec<Actuator>, Vec<u64>, _, _, _) =
        match str_at(case, "kind")? {
            "single" => {
                let params = field(case, "params")?;
                let trn = field(params, "transmission")?;
                let dofs = arr_at(trn, "dofs")?
                    .iter()
                    .map(super::json::uint)
                    .collect::<Result<Vec<_>, _>>()?;
                let one = Actuator {
                    params,
                    ctrl: num_at(inputs, "ctrl")?,
                    act: opt_num(field(inputs, "act")?)?,
                    force: num_at(outputs, "actuator_force")?,
                    act_dot: opt_num(field(outputs, "act_dot")?)?,
                    act_next: opt_num(field(outputs, "act_next")?)?,
                };
                (
                    vec![one],
                    dofs,
                    nums_at(inputs, "qpos")?,
                    nums_at(inputs, "qvel")?,
                    nums_at(outputs, "qfrc_actuator")?,
                )
            }
            "multi" => {
                let params = arr_at(case, "params")?;
                let list = |v: &Value, key: &str| -> Result<Vec<Option<f64>>, String> {
                    arr_at(v, key)?.iter().map(opt_num).collect()
                };
                let (ctrl, act) = (list(inputs, "ctrl")?, list(inputs, "act")?);
                let (force, act_dot, act_next) = (
                    list(outputs, "actuator_force")?,
                    list(outputs, "act_dot")?,
                    list(outputs, "act_next")?,
                );
                let n = params.len();
                if [
                    ctrl.len(),
                    act.len(),
                    force.len(),
                    act_dot.len(),
                    act_next.len(),
                ]
                .iter()
                .any(|&l| l != n)
                {
                    return Err(Stop::Fail("per-actuator lists differ in length".into()));
                }
                let actuators = (0..n)
                    .map(|i| {
                        Ok(Actuator {
                            params: &params[i],
                            ctrl: ctrl[i].ok_or("a null ctrl")?,
                            act: act[i],
                            force: force[i].ok_or("a null actuator_force")?,
                            act_dot: act_dot[i],
                            act_next: act_next[i],
                        })
                    })
                    .collect::<Result<Vec<_>, String>>()?;
                let dofs = arr_at(inputs, "dofs")?
                    .iter()
                    .map(super::json::uint)
                    .collect::<Result<Vec<_>, _>>()?;
                (
                    actuators,
                    dofs,
                    nums_at(inputs, "qpos")?,
                    nums_at(inputs, "qvel")?,
                    nums_at(outputs, "qfrc_actuator")?,
                )
            }
            other => return Err(Stop::Fail(format!("unknown case kind `{other}`"))),
        };
    if qpos.len() != dofs.len() || qvel.len() != dofs.len() || qfrc.len() != dofs.len() {
        return Err(Stop::Fail(
            "qpos, qvel and qfrc_actuator must follow the dofs".into(),
        ));
    }

    let case_robot = CaseRobot::new(actuators.iter().map(|a| a.params))?;
    let robot = &case_robot.robot;
    let mut placed: Vec<(Transmission, String, usize)> = Vec::new();
    let mut groups = Vec::new();
    for (i, (a, (transmission, target))) in actuators.iter().zip(&case_robot.targets).enumerate() {
        let (transmission, target) = (*transmission, target.clone());
        // Actuators sharing a target read different command fields.
        let sharing = placed
            .iter()
            .filter(|(t, name, _)| *t == transmission && *name == target)
            .count();
        let field =
            match sharing {
                0 => CommandField::Effort,
                1 => CommandField::Position,
                2 => CommandField::Velocity,
                _ => return Err(Stop::Skip(
                    "more than three actuators on one target (Sinew's command has three fields)"
                        .into(),
                )),
            };
        placed.push((transmission, target.clone(), i));
        let cfg = MjGeneralCfg {
            command_field: field,
            ..general_of(a.params)?
        };
        groups.push(
            GroupCfg::new(format!("a{i}"), [literal(&target)], cfg).with_transmission(transmission),
        );
    }
    let options = PlanOptions {
        timestep: timestep as f32,
        ..PlanOptions::default()
    };
    let plan = Plan::new(robot, groups, 1, options).map_err(|e| format!("plan: {e}"))?;
    let mut backend = make(plan).map_err(|e| format!("backend: {e}"))?;
    let b = backend.as_mut();
    // The compared values in order: each actuator's force, act_dot and
    // act_next (where MuJoCo gives them), then each dof's qfrc_actuator.
    let mut names: Vec<(String, f64)> = Vec::new();
    for (i, a) in actuators.iter().enumerate() {
        names.push((format!("actuator_force[{i}]"), a.force));
        if let Some(r) = a.act_dot {
            names.push((format!("act_dot[{i}]"), r));
        }
        if let Some(r) = a.act_next {
            names.push((format!("act_next[{i}]"), r));
        }
    }
    // The command column of each dof.
    let columns = case_robot.columns(&dofs)?;
    for (dof, &reference) in dofs.iter().zip(&qfrc) {
        names.push((format!("qfrc_actuator[dof {dof}]"), reference));
    }
    // One step from the case's inputs, each nudged by half an f32 ulp in
    // `pattern` (`None`: as given); the compared values in `names` order.
    let outputs = |b: &mut dyn sinew::Backend, pattern: Option<u32>| -> Result<Vec<f32>, String> {
        let nudge = |x: f64, k: u32| pattern.map_or(x, |p| nudge(x, k, p));
        let mut cmd = ActuatorCmd::zeros(1, robot.num_targets());
        for (k, &j) in columns.iter().enumerate() {
            cmd.pos[j] = nudge(qpos[k], 2 * k as u32) as f32;
            cmd.vel[j] = nudge(qvel[k], 2 * k as u32 + 1) as f32;
        }
        for (n, (&(_, _, i), a)) in placed.iter().zip(&actuators).enumerate() {
            let info = &b.plan().groups()[i];
            let (column, group) = (info.cmd_columns[0], info.cfg.name.clone());
            let sinew::ActuatorCfg::MjGeneral(cfg) = info.cfg.actuator else {
                unreachable!("every group is MjGeneral")
            };
            let k = 100 + 2 * n as u32;
            cmd.fields_mut()[cfg.command_field as usize][column] = nudge(a.ctrl, k) as f32;
            if let Some(act) = a.act {
                let value = Values::Scalar(nudge(act, k + 1) as f32);
                b.set_state(&group, sinew::MJ_ACT.name, EnvIds::All, value)
                    .map_err(|e| format!("set_state: {e}"))?;
            }
        }
        b.step(&cmd).map_err(|e| format!("step: {e}"))?;
        let mut ctrl = vec![0.0f32; b.plan().num_ctrl()];
        b.read_ctrl(&mut ctrl)
            .map_err(|e| format!("read_ctrl: {e}"))?;
        let mut effort = vec![0.0f32; b.plan().num_targets()];
        b.read_joint_effort(&mut effort[..robot.joints.len()])
            .map_err(|e| format!("read_joint_effort: {e}"))?;
        let mut act_dot = vec![0.0f32; b.plan().num_ctrl()];
        if actuators.iter().any(|a| a.act_dot.is_some()) {
            b.read_output(sinew::ACT_DOT.name, &mut act_dot)
                .map_err(|e| format!("read_output: {e}"))?;
        }
        let mut out = Vec::new();
        for (i, a) in actuators.iter().enumerate() {
            let info = &b.plan().groups()[i];
            let (group, c) = (info.cfg.name.clone(), info.ctrl_columns[0]);
            out.push(ctrl[c]);
            if a.act_dot.is_some() {
                out.push(act_dot[c]);
            }
            if a.act_next.is_some() {
                let mut one = [0.0f32];
                b.read_state(&group, sinew::MJ_ACT.name, &mut one)
                    .map_err(|e| format!("read_state: {e}"))?;
                out.push(one[0]);
            }
        }
        out.extend(columns.iter().map(|&j| effort[j]));
        Ok(out)
    };
    let ours = outputs(b, None)?;
    let allowed = |r: f64| MUJOCO_TOLERANCE * r.abs().max(1.0);
    let off = names
        .iter()
        .zip(&ours)
        .any(|((_, r), &o)| (f64::from(o) - r).abs() > allowed(*r));
    // Only a value off by more than the tolerance is given its sensitivity:
    // how far the f32 rounding of the step's own inputs moves it.
    let mut sensitivity = vec![0.0f64; ours.len()];
    if off {
        for pattern in 0..4 {
            let moved = outputs(b, Some(pattern))?;
            for ((s, m), o) in sensitivity.iter_mut().zip(&moved).zip(&ours) {
                *s = s.max(f64::from(*m - *o).abs());
            }
        }
    }
    let mut first_failure: Option<String> = None;
    for (((what, reference), &o), &s) in names.iter().zip(&ours).zip(&sensitivity) {
        let what = if s > 0.0 {
            format!("{what} (f32 input sensitivity {s:.1e})")
        } else {
            what.clone()
        };
        let (ours, allowed) = (f64::from(o), allowed(*reference) + s);
        if !tally.compare(id, || what.clone(), ours, *reference, allowed) && first_failure.is_none()
        {
            first_failure = Some(format!(
                "{what}: sinew {ours:e}, MuJoCo {reference:e} (|Δ| {:.3e} > {allowed:.1e})",
                (ours - reference).abs()
            ));
        }
    }
    match first_failure {
        None => Ok(()),
        Some(reason) => Err(Stop::Fail(reason)),
    }
}
