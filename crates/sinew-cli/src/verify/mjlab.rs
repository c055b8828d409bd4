//! mjlab golden episodes (`mjlab-actuator-golden/v1`): robots, groups and
//! steps of mjlab 1.6.0's own actuator code, replayed step by step.

use serde_json::Value;
use sinew::{
    Activation, ActuatorCfg, ActuatorCmd, Backend, BuiltinMotorCfg, BuiltinPositionCfg,
    BuiltinVelocityCfg, DcMotorCfg, DelayCfg, DelayShare, Dense, EnvIds, GroupCfg, IdealPdCfg,
    InputOrder, Lags, LearnedMlpCfg, Mlp, Plan, PlanOptions, Resample, Robot, Transmission, Values,
};

use super::json::{
    arr, arr_at, bool_at, field, limited_pair, matrix, num, num_at, str_at, string, uint32,
    uint32_at, usize_at,
};
use super::{MakeBackend, Outcome, Stop, Tally, VerifyOptions};

/// The tolerance on a learned column's ctrl, absolute and relative:
/// `|Δ| ≤ 1e-5 · (1 + |reference|)`. Learned columns cannot be bit-exact:
/// torch sums the matrix products in its own order.
pub const LEARNED_TOLERANCE: f64 = 1e-5;

pub(super) fn run_case(
    case: &Value,
    id: &str,
    make: MakeBackend<'_>,
    verify: &VerifyOptions,
    tally: &mut Tally,
) -> Outcome {
    match run(case, id, make, verify, tally) {
        Ok(()) => Outcome::Passed,
        Err(stop) => stop.into(),
    }
}

fn opt_f32(v: &Value) -> Result<Option<f32>, String> {
    if v.is_null() {
        Ok(None)
    } else {
        num(v).map(|x| Some(x as f32))
    }
}

/// `"all"` or a list of env ids, owned.
enum Ids {
    All,
    List(Vec<u32>),
}

impl Ids {
    fn get(&self) -> EnvIds<'_> {
        match self {
            Ids::All => EnvIds::All,
            Ids::List(ids) => EnvIds::List(ids),
        }
    }
}

fn env_ids(v: &Value) -> Result<Ids, String> {
    match v.as_str() {
        Some("all") => Ok(Ids::All),
        _ => Ok(Ids::List(
            arr(v)?.iter().map(uint32).collect::<Result<_, _>>()?,
        )),
    }
}

/// mjlab's setter shapes: 1-D is one value per env; 2-D is per (env, target),
/// or one column broadcast over the targets.
fn values(v: &Value, num_targets: usize) -> Result<(Vec<f32>, bool), String> {
    let rows = arr(v)?;
    if rows.first().is_some_and(Value::is_array) {
        let m = matrix(v)?;
        if m[0].len() == 1 && num_targets != 1 {
            Ok((m.iter().map(|r| r[0]).collect(), false))
        } else {
            Ok((m.concat(), true))
        }
    } else {
        Ok((super::json::f32s(v)?, false))
    }
}

fn as_values(data: &(Vec<f32>, bool)) -> Values<'_> {
    if data.1 {
        Values::PerEnvTarget(&data.0)
    } else {
        Values::PerEnv(&data.0)
    }
}

fn names(v: &Value) -> Result<Vec<String>, String> {
    arr(v)?
        .iter()
        .map(|x| string(x).map(str::to_owned))
        .collect()
}

/// A network in the golden files' neutral form: `{"layers": [{"weight":
/// [[..]], "bias": [..], "activation": ".."}, ..]}`, torch's `Linear` layout.
fn network(v: &Value, group: &str) -> Result<Mlp, String> {
    let layers = arr_at(v, "layers")?
        .iter()
        .enumerate()
        .map(|(k, layer)| {
            let weight = matrix(field(layer, "weight")?)?;
            let name = str_at(layer, "activation")?;
            let activation = Activation::from_name(name)
                .ok_or_else(|| format!("unknown activation `{name}`"))?;
            Ok(Dense::new(
                format!("layers[{k}]"),
                weight.len(),
                weight.first().map_or(0, Vec::len),
                weight.concat(),
                super::json::f32s(field(layer, "bias")?)?,
                activation,
            ))
        })
        .collect::<Result<Vec<_>, String>>()?;
    Mlp::new(format!("of group `{group}`"), layers).map_err(|e| e.to_string())
}

/// The groups of a case, or the reason it cannot run.
fn build(case: &Value) -> Result<(Robot, Vec<GroupCfg>, PlanOptions, usize), Stop> {
    let r = field(case, "robot")?;
    let robot = Robot {
        joints: names(field(r, "joint")?)?,
        tendons: arr_at(r, "tendon")?
            .iter()
            .map(|t| str_at(t, "name").map(str::to_owned))
            .collect::<Result<_, _>>()?,
        ..Robot::default()
    };
    let per_actuator = case.get("path").is_some_and(|p| p == "per_actuator");
    let mut groups = Vec::new();
    for g in arr_at(case, "groups")? {
        let c = field(g, "cfg")?;
        let f = |k: &str| num_at(c, k).map(|x| x as f32);
        let actuator: ActuatorCfg = match str_at(g, "kind")? {
            "IdealPd" => IdealPdCfg {
                stiffness: f("stiffness")?,
                damping: f("damping")?,
                effort_limit: f("effort_limit")?,
            }
            .into(),
            "DcMotor" => DcMotorCfg {
                stiffness: f("stiffness")?,
                damping: f("damping")?,
                effort_limit: f("effort_limit")?,
                saturation_effort: f("saturation_effort")?,
                velocity_limit: f("velocity_limit")?,
            }
            .into(),
            "BuiltinPosition" => BuiltinPositionCfg {
                stiffness: f("stiffness")?,
                damping: f("damping")?,
                effort_limit: opt_f32(field(c, "effort_limit")?)?,
            }
            .into(),
            "BuiltinVelocity" => BuiltinVelocityCfg {
                damping: f("damping")?,
                effort_limit: opt_f32(field(c, "effort_limit")?)?,
            }
            .into(),
            "BuiltinMotor" => BuiltinMotorCfg {
                effort_limit: f("effort_limit")?,
                gear: f("gear")?,
            }
            .into(),
            "LearnedMlp" => {
                let order = str_at(c, "input_order")?;
                LearnedMlpCfg::new(
                    network(field(g, "network")?, str_at(g, "name")?)?,
                    f("effort_limit")?,
                    f("saturation_effort")?,
                    f("velocity_limit")?,
                )
                .with_history_length(uint32_at(c, "history_length")?)
                .with_scales(f("pos_scale")?, f("vel_scale")?, f("torque_scale")?)
                .with_input_order(
                    InputOrder::from_name(order)
                        .ok_or_else(|| format!("unknown input_order `{order}`"))?,
                )
                .into()
            }
            other => return Err(Stop::Skip(format!("kind {other} is not modelled"))),
        };
        let max_lag = uint32_at(c, "delay_max_lag")?;
        let delay = if max_lag > 0 {
            Some(DelayCfg {
                min_lag: uint32_at(c, "delay_min_lag")?,
                max_lag,
                hold_prob: f("delay_hold_prob")?,
                update_period: uint32_at(c, "delay_update_period")?,
                per_env_phase: bool_at(c, "delay_per_env_phase")?,
                resample: Resample::EveryStep,
                share: if per_actuator {
                    DelayShare::Own
                } else {
                    DelayShare::Auto
                },
            })
        } else {
            None
        };
        groups.push(GroupCfg {
            name: str_at(g, "name")?.to_owned(),
            targets: names(field(g, "target_names_expr")?)?,
            transmission: if field(g, "transmission")? == "tendon" {
                Transmission::Tendon
            } else {
                Transmission::Joint
            },
            actuator,
            armature: opt_f32(field(c, "armature")?)?,
            frictionloss: opt_f32(field(c, "frictionloss")?)?,
            viscous_damping: opt_f32(field(c, "viscous_damping")?)?,
            delay,
            compute_force: false,
        });
    }
    let options = PlanOptions {
        sort_actuators: bool_at(case, "sort_actuators")?,
        ..PlanOptions::default()
    };
    Ok((robot, groups, options, usize_at(case, "num_envs")?))
}

/// The plan must resolve, order and share exactly as mjlab compiled the case.
fn check_plan(case: &Value, plan: &Plan) -> Result<(), String> {
    let golden = arr_at(case, "groups")?;
    for (g, info) in golden.iter().zip(plan.groups()) {
        let targets = names(field(g, "targets")?)?;
        if info.targets != targets {
            return Err(format!(
                "group {}: targets {:?}, mjlab {:?}",
                info.cfg.name, info.targets, targets
            ));
        }
    }
    let order = arr_at(case, "ctrl_order")?;
    if order.len() != plan.num_ctrl() {
        return Err(format!(
            "{} ctrl columns, mjlab {}",
            plan.num_ctrl(),
            order.len()
        ));
    }
    for (j, (o, col)) in order.iter().zip(plan.ctrl_columns()).enumerate() {
        let group = &plan.groups()[col.group].cfg.name;
        let want = (str_at(o, "group")?, str_at(o, "target")?);
        if (group.as_str(), col.target.as_str()) != want {
            return Err(format!(
                "ctrl column {j}: ({group}, {}), mjlab {want:?}",
                col.target
            ));
        }
        if col.cmd_column != usize_at(o, "column")? {
            return Err(format!(
                "ctrl column {j}: command column {}",
                col.cmd_column
            ));
        }
        let ctrl_range = limited_pair(o, "ctrllimited", "ctrlrange")?;
        let force_range = limited_pair(o, "forcelimited", "forcerange")?;
        if (col.ctrl_range, col.force_range) != (ctrl_range, force_range) {
            return Err(format!(
                "ctrl column {j}: ranges {:?} {:?}, MuJoCo compiled {ctrl_range:?} {force_range:?}",
                col.ctrl_range, col.force_range
            ));
        }
    }
    for (a, ga) in golden.iter().enumerate() {
        for (b, gb) in golden.iter().enumerate() {
            let (da, db) = (field(ga, "delay_buffer")?, field(gb, "delay_buffer")?);
            let mjlab_shared = !da.is_null() && da == db;
            let ours = plan.groups()[a].delay_buffer.is_some()
                && plan.groups()[a].delay_buffer == plan.groups()[b].delay_buffer;
            if mjlab_shared != ours {
                return Err(format!(
                    "groups {a} and {b}: shared delay buffer {ours}, mjlab {mjlab_shared}"
                ));
            }
        }
    }
    Ok(())
}

/// Every `step[key]` entry (an optional list).
fn entries<'a>(step: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    step.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn run(
    case: &Value,
    id: &str,
    make: MakeBackend<'_>,
    verify: &VerifyOptions,
    tally: &mut Tally,
) -> Result<(), Stop> {
    let (robot, groups, options, num_envs) = build(case)?;
    let plan = Plan::new(&robot, groups, num_envs, options).map_err(|e| format!("plan: {e}"))?;
    check_plan(case, &plan)?;
    let mut backend = make(plan).map_err(|e| format!("backend: {e}"))?;
    let b = backend.as_mut();
    let num_targets = robot.num_targets();
    let num_ctrl = b.plan().num_ctrl();
    let targets_of = |b: &dyn Backend, name: &str| -> Result<usize, String> {
        let g = b.plan().group_index(name).map_err(|e| e.to_string())?;
        Ok(b.plan().groups()[g].targets.len())
    };
    let mut ctrl = vec![0.0f32; num_envs * num_ctrl];
    for (k, step) in arr_at(case, "steps")?.iter().enumerate() {
        let at = |what: &str, e: sinew::Error| format!("step {k}: {what}: {e}");
        if let Some(r) = step.get("reset") {
            b.reset(env_ids(r)?.get()).map_err(|e| at("reset", e))?;
        }
        for a in entries(step, "set_gains") {
            let group = str_at(a, "group")?;
            let n = targets_of(b, group)?;
            let given = |key: &str| -> Result<Option<(Vec<f32>, bool)>, String> {
                let v = field(a, key)?;
                (!v.is_null()).then(|| values(v, n)).transpose()
            };
            let (kp, kd) = (given("kp")?, given("kd")?);
            let envs = env_ids(field(a, "env_ids")?)?;
            b.set_gains(
                group,
                envs.get(),
                kp.as_ref().map(as_values),
                kd.as_ref().map(as_values),
            )
            .map_err(|e| at("set_gains", e))?;
        }
        for a in entries(step, "set_effort_limit") {
            let group = str_at(a, "group")?;
            let v = values(field(a, "effort_limit")?, targets_of(b, group)?)?;
            b.set_effort_limit(group, env_ids(field(a, "env_ids")?)?.get(), as_values(&v))
                .map_err(|e| at("set_effort_limit", e))?;
        }
        for a in entries(step, "set_param") {
            let group = str_at(a, "group")?;
            let v = values(field(a, "values")?, targets_of(b, group)?)?;
            b.set_param(
                group,
                str_at(a, "name")?,
                env_ids(field(a, "env_ids")?)?.get(),
                as_values(&v),
            )
            .map_err(|e| at("set_param", e))?;
        }
        for a in entries(step, "set_lags") {
            let given = field(a, "lags")?;
            let lags: Vec<u32> = match given {
                Value::Array(l) => l.iter().map(uint32).collect::<Result<_, _>>()?,
                x => vec![uint32(x)?],
            };
            let lags = if given.is_array() {
                Lags::PerEnv(&lags)
            } else {
                Lags::Scalar(lags[0])
            };
            b.set_lags(
                str_at(a, "group")?,
                env_ids(field(a, "env_ids")?)?.get(),
                lags,
            )
            .map_err(|e| at("set_lags", e))?;
        }
        let mut cmd = ActuatorCmd::zeros(num_envs, num_targets);
        let c = field(step, "cmd")?;
        for (name, dst) in [
            ("position_target", &mut cmd.position_target),
            ("velocity_target", &mut cmd.velocity_target),
            ("effort_target", &mut cmd.effort_target),
            ("pos", &mut cmd.pos),
            ("vel", &mut cmd.vel),
        ] {
            let values = matrix(field(c, name)?)?.concat();
            if values.len() != dst.len() {
                return Err(Stop::Fail(format!(
                    "step {k}: cmd.{name} holds {} values, the robot needs {}",
                    values.len(),
                    dst.len()
                )));
            }
            *dst = values;
        }
        b.step(&cmd).map_err(|e| at("step", e))?;
        b.read_ctrl(&mut ctrl).map_err(|e| at("read_ctrl", e))?;
        let describe = |env: usize, j: usize| {
            let col = &b.plan().ctrl_columns()[j];
            let group = &b.plan().groups()[col.group].cfg;
            format!(
                "env {env}, ctrl column {j} ({} `{}` on {})",
                group.actuator.kind_name(),
                group.name,
                col.target
            )
        };
        let expected = arr_at(field(step, "expected")?, "ctrl")?;
        check_rows(k, "expected ctrl", expected, num_envs, num_ctrl)?;
        for (env, row) in expected.iter().enumerate() {
            for (j, want) in arr(row)?.iter().enumerate() {
                // The text rounds to the exact float32 (the schema's rule).
                let ours = *ctrl
                    .get(env * num_ctrl + j)
                    .ok_or_else(|| format!("step {k}: expected ctrl has more values than Sinew"))?;
                let want = num(want)? as f32;
                let group = b.plan().ctrl_columns()[j].group;
                let learned = b.plan().groups()[group].stage == sinew::Stage::Learned;
                let scale = f64::from(ours.abs().max(want.abs()));
                let allowed = if learned {
                    // torch sums the matrix products in another order.
                    LEARNED_TOLERANCE * (1.0 + scale)
                } else if verify.mjlab_bit_exact {
                    0.0
                } else {
                    1e-4 + 1e-5 * scale
                };
                let what = || format!("step {k}, {}", describe(env, j));
                if !tally.compare(id, what, f64::from(ours), f64::from(want), allowed) {
                    return Err(Stop::Fail(format!(
                        "step {k}, {}: sinew {ours:e}, mjlab {want:e}",
                        describe(env, j)
                    )));
                }
            }
        }
        if let Some(upstream) = step.get("upstream_expected") {
            let rows = arr_at(upstream, "ctrl")?;
            check_rows(k, "upstream_expected ctrl", rows, num_envs, num_ctrl)?;
            for (env, row) in rows.iter().enumerate() {
                for (j, want) in arr(row)?.iter().enumerate() {
                    let ours = f64::from(ctrl[env * num_ctrl + j]);
                    let want = num(want)?;
                    // NaN and infinite references fail too.
                    let close = (ours - want).abs() <= 1e-5;
                    if !close {
                        return Err(Stop::Fail(format!(
                            "step {k}, {}: sinew {ours}, mjlab's test {want}",
                            describe(env, j)
                        )));
                    }
                }
            }
        }
        if let Some(lags) = field(step, "expected")?
            .get("lags")
            .and_then(Value::as_object)
        {
            let mut ours = vec![0u32; num_envs];
            for (group, want) in lags {
                b.read_lags(group, &mut ours)
                    .map_err(|e| at("read_lags", e))?;
                let want: Vec<u32> = arr(want)?.iter().map(uint32).collect::<Result<_, _>>()?;
                if ours != want {
                    return Err(Stop::Fail(format!(
                        "step {k}: group {group} lags {ours:?}, mjlab {want:?}"
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Checks that an expected ctrl is `(num_envs, num_ctrl)`: every value of
/// Sinew's ctrl is compared, and none past it.
fn check_rows(
    step: usize,
    what: &str,
    rows: &[Value],
    num_envs: usize,
    num_ctrl: usize,
) -> Result<(), Stop> {
    if rows.len() != num_envs {
        return Err(Stop::Fail(format!(
            "step {step}: {what} has {} rows, Sinew {num_envs} envs",
            rows.len()
        )));
    }
    for (env, row) in rows.iter().enumerate() {
        let n = arr(row)?.len();
        if n != num_ctrl {
            return Err(Stop::Fail(format!(
                "step {step}: {what} row {env} has {n} values, Sinew {num_ctrl} ctrl columns"
            )));
        }
    }
    Ok(())
}
