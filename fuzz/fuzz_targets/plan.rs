//! Random plans (kinds, delays, shared MuJoCo targets, resets, setters)
//! stepped on the CPU with random, partly non-finite commands. Invariants:
//! no panic; every ctrl value finite; an env listed as non-finite has an
//! all-zero row; and an env never given a non-finite value is bit-identical,
//! ctrl, lags and activations, to the same run without the faults.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use sinew::{
    ActuatorCfg, ActuatorCmd, Activation, Backend, BuiltinPositionCfg, CpuBackend, DcMotorCfg,
    DelayCfg, Dense, DynType, EnvIds, GroupCfg, IdealPdCfg, LearnedMlpCfg, Mlp, MjGeneralCfg,
    Plan, PlanOptions, RemotizedPdCfg, Robot, Values,
};

const MAX_ENVS: usize = 5;
const MAX_JOINTS: usize = 6;

#[derive(Debug, Arbitrary)]
enum Kind {
    Pd { kp: f32, kd: f32, limit: f32 },
    Dc { kp: f32, kd: f32, sat: f32, vlim: f32 },
    Remotized { kp: f32, kd: f32, knots: Vec<(f32, f32)> },
    Position { kp: f32, kd: f32 },
    Filter { tau: f32, gain: f32, act_range: Option<(f32, f32)> },
    Mlp { w: [f32; 4], scale: f32 },
}

#[derive(Debug, Arbitrary)]
struct Group {
    kind: Kind,
    first: u8,
    len: u8,
    delay: Option<(u8, u8, u8)>,
}

#[derive(Debug, Arbitrary)]
enum Fault {
    Nan,
    Inf,
    NegInf,
    Huge,
}

#[derive(Debug, Arbitrary)]
struct Step {
    /// Seeds of the clean command values.
    values: Vec<i16>,
    /// (env, field, column, fault).
    faults: Vec<(u8, u8, u8, Fault)>,
    reset: Option<Vec<u8>>,
    /// (group, env, value) for the group's first parameter.
    set_param: Option<(u8, u8, f32)>,
}

#[derive(Debug, Arbitrary)]
struct Input {
    num_envs: u8,
    num_joints: u8,
    groups: Vec<Group>,
    steps: Vec<Step>,
    seed: u32,
}

/// The kind's config; `None` where the network cannot be built (its own
/// checks are fuzzed by the safetensors target).
fn kind_cfg(kind: &Kind) -> Option<ActuatorCfg> {
    Some(match *kind {
        Kind::Pd { kp, kd, limit } => IdealPdCfg::new(kp, kd).with_effort_limit(limit).into(),
        Kind::Dc { kp, kd, sat, vlim } => DcMotorCfg {
            stiffness: kp,
            damping: kd,
            effort_limit: sat,
            saturation_effort: sat,
            velocity_limit: vlim,
        }
        .into(),
        Kind::Remotized { kp, kd, ref knots } => {
            let mut angle = -1.0;
            let table: Vec<[f32; 3]> = knots
                .iter()
                .take(8)
                .map(|&(step, torque)| {
                    angle += step.abs().min(1.0) + 1e-3;
                    [angle, 1.0, torque]
                })
                .collect();
            RemotizedPdCfg::new(kp, kd, table).into()
        }
        Kind::Position { kp, kd } => BuiltinPositionCfg {
            stiffness: kp,
            damping: kd,
            effort_limit: None,
        }
        .into(),
        Kind::Filter {
            tau,
            gain,
            act_range,
        } => {
            let mut cfg = MjGeneralCfg::motor();
            cfg.dyn_type = DynType::Filter;
            cfg.dynprm[0] = tau;
            cfg.gainprm[0] = gain;
            cfg.act_range = act_range.map(|(a, b)| [a, b]);
            cfg.into()
        }
        Kind::Mlp { w, scale } => {
            let layer = Dense::new("0", 1, 4, w.to_vec(), vec![0.0], Activation::Tanh);
            let net = Mlp::new("fuzz", vec![layer]).ok()?;
            LearnedMlpCfg::new(net, 10.0, 10.0, 10.0)
                .with_history_length(2)
                .with_scales(scale, 1.0, 1.0)
                .into()
        }
    })
}

fn plan(input: &Input) -> Option<Plan> {
    let num_envs = 1 + input.num_envs as usize % MAX_ENVS;
    let n = 1 + input.num_joints as usize % MAX_JOINTS;
    let robot = Robot::from_joints((0..n).map(|j| format!("j{j}")));
    let groups: Vec<GroupCfg> = input
        .groups
        .iter()
        .take(4)
        .enumerate()
        .map(|(g, spec)| {
            let first = spec.first as usize % n;
            let len = 1 + spec.len as usize % (n - first);
            let targets: Vec<String> = (first..first + len).map(|j| format!("j{j}")).collect();
            let mut cfg = GroupCfg::new(format!("g{g}"), targets, kind_cfg(&spec.kind)?);
            if let Some((min, max, hold)) = spec.delay {
                let mut delay = DelayCfg::new(u32::from(min % 4), u32::from(max % 4));
                delay.hold_prob = f32::from(hold) / 255.0;
                cfg = cfg.with_delay(delay);
            }
            Some(cfg)
        })
        .collect::<Option<_>>()?;
    let options = PlanOptions {
        seed: input.seed,
        ..PlanOptions::default()
    };
    Plan::new(&robot, groups, num_envs, options).ok()
}

fn fault_value(fault: &Fault) -> f32 {
    match fault {
        Fault::Nan => f32::NAN,
        Fault::Inf => f32::INFINITY,
        Fault::NegInf => f32::NEG_INFINITY,
        // 1e39 as a user's f64 becomes f32 infinity.
        Fault::Huge => 1e39f64 as f32,
    }
}

/// Steps both engines in lockstep and checks the invariants.
fn check(input: &Input, plan: Plan) {
    let (num_envs, t, c) = (plan.num_envs(), plan.num_targets(), plan.num_ctrl());
    let groups: Vec<String> = plan.groups().iter().map(|g| g.cfg.name.clone()).collect();
    let delayed: Vec<String> = plan
        .buffers()
        .iter()
        .map(|b| plan.groups()[b.groups[0]].cfg.name.clone())
        .collect();
    let mut faulty = CpuBackend::new(plan.clone());
    let mut clean = CpuBackend::new(plan);
    let mut cmd = ActuatorCmd::zeros(num_envs, t);
    let mut clean_cmd = ActuatorCmd::zeros(num_envs, t);
    let mut ever_faulted = vec![false; num_envs];
    let (mut a, mut b) = (vec![0.0f32; num_envs * c], vec![0.0f32; num_envs * c]);
    let (mut lags_a, mut lags_b) = (vec![0u32; num_envs], vec![0u32; num_envs]);
    for step in input.steps.iter().take(12) {
        for (f, field) in clean_cmd.fields_mut().into_iter().enumerate() {
            for (i, x) in field.iter_mut().enumerate() {
                let seed = step.values.get(f * 7 + i % 7).copied().unwrap_or(0);
                *x = f32::from(seed) / 4096.0;
            }
        }
        cmd.clone_from(&clean_cmd);
        for (env, field, column, fault) in step.faults.iter().take(4) {
            let env = *env as usize % num_envs;
            let at = env * t + *column as usize % t;
            cmd.fields_mut()[*field as usize % 5][at] = fault_value(fault);
            ever_faulted[env] = true;
        }
        if let Some(envs) = &step.reset {
            let ids: Vec<u32> = envs.iter().take(3).map(|&e| u32::from(e) % num_envs as u32).collect();
            faulty.reset(EnvIds::List(&ids)).expect("ids in range");
            clean.reset(EnvIds::List(&ids)).expect("ids in range");
        }
        if let Some((g, env, value)) = step.set_param.filter(|_| !groups.is_empty()) {
            let group = &groups[g as usize % groups.len()];
            let kind = &faulty.plan().groups()[g as usize % groups.len()].cfg.actuator;
            if let Some(param) = kind.params().first() {
                let ids = [u32::from(env) % num_envs as u32];
                let ra = faulty.set_param(group, param.name, EnvIds::List(&ids), Values::Scalar(value));
                let rb = clean.set_param(group, param.name, EnvIds::List(&ids), Values::Scalar(value));
                assert_eq!(ra.is_ok(), rb.is_ok(), "setters agree");
            }
        }
        faulty.step(&cmd).expect("shapes match");
        clean.step(&clean_cmd).expect("shapes match");
        faulty.read_ctrl(&mut a).expect("shapes match");
        clean.read_ctrl(&mut b).expect("shapes match");
        assert!(a.iter().all(|x| x.is_finite()), "a non-finite ctrl value: {a:?}");
        let bad = faulty.nonfinite_envs().expect("after a step").to_vec();
        for &env in &bad {
            let row = &a[env as usize * c..(env as usize + 1) * c];
            assert!(row.iter().all(|&x| x == 0.0), "env {env} listed but not zeroed: {row:?}");
        }
        for env in (0..num_envs).filter(|&e| !ever_faulted[e]) {
            let (ra, rb) = (&a[env * c..(env + 1) * c], &b[env * c..(env + 1) * c]);
            let same = ra.iter().zip(rb).all(|(x, y)| x.to_bits() == y.to_bits());
            assert!(same, "env {env} moved by another env's fault: {ra:?} vs {rb:?}");
        }
        for group in &delayed {
            faulty.read_lags(group, &mut lags_a).expect("a delayed group");
            clean.read_lags(group, &mut lags_b).expect("a delayed group");
            for env in (0..num_envs).filter(|&e| !ever_faulted[e]) {
                assert_eq!(lags_a[env], lags_b[env], "lags of env {env}, group {group}");
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = Input::arbitrary(&mut Unstructured::new(data)) else {
        return;
    };
    if let Some(plan) = plan(&input) {
        check(&input, plan);
    }
});
