//! The parity suite: every backend against the CPU reference over random
//! batches from a seeded RNG, many steps, with resets and setters in between
//! and outputs poisoned with NaN before each step (so an element a backend
//! forgets to write shows up). Efforts agree within the backend's named
//! [`Tolerance`]; non-finite reports, delay states (ring head, pushes, lag,
//! step count, phase) and parameters agree bit for bit.

use sinew::{
    Activation, BuiltinMuscleCfg, BuiltinPositionCfg, CommandField, Dense, FixedTendon, GpuContext,
    HistoryInit, InputOrder, LearnedMlpCfg, LstmLayer, LstmNet, LstmNetCfg, MjGeneralCfg,
    MjMuscleCfg, MjPositionCfg, Mlp,
};
use sinew::{
    ActuatorCmd, Backend, BiasType, CpuBackend, DcMotorCfg, DelayCfg, DelayShare, DelayState,
    Dispatches, DynType, EnvIds, GainType, GroupCfg, IdealPdCfg, Lags, NativeActuator, Plan,
    PlanOptions, Robot, Transmission, Values, WgpuBackend, WrappedCfg,
};

use wgpu::util::DeviceExt;

use crate::support::{gpu, Rng, Tolerance};

/// A simulator-native motor (MuJoCo `<motor>`, gear 1) on `target`.
fn native_motor(transmission: Transmission, target: &str) -> NativeActuator {
    NativeActuator {
        name: format!("{target}_motor"),
        transmission,
        target: target.to_owned(),
        gain: GainType::Fixed,
        bias: BiasType::None,
        dyn_type: DynType::None,
        gainprm: [1.0, 0.0, 0.0],
        biasprm: [0.0; 3],
        general: None,
    }
}

/// A 19-joint robot with a spare joint no group claims, two tendons that
/// carry native motors and a fixed tendon with a force range, and groups of
/// every law, interleaved so that runs are short, with delay buffers of
/// different schedules. MuJoCo-law groups cover every dynamics type, gain
/// and bias, two actuators on one joint, a joint force range, a tendon force
/// range and a builtin muscle that computes its force. A delayed learned MLP
/// (non-contiguous taps, `vel_pos`, zero-initialized history) and a
/// two-layer LSTM cover every activation.
fn scenario(num_envs: usize, sort_actuators: bool, seed: u32) -> Plan {
    scenario_with(num_envs, sort_actuators, seed, false)
}

/// [`scenario`], or with `per_element` its MuJoCo stage one the GPU runs
/// per element (so that a step can be one dispatch, [`Dispatches`]): no
/// two MuJoCo members on one joint (no damper, cylinder or tendon motor),
/// the tendon on joints of its own, no tendon range.
fn scenario_with(num_envs: usize, sort_actuators: bool, seed: u32, per_element: bool) -> Plan {
    let mut robot = Robot::from_joints((0..19).map(|i| format!("j{i}")));
    robot.tendons = vec!["t0".into(), "t1".into(), "t2".into()];
    let tendon_joints = match per_element {
        false => ["j13", "j14"],
        true => ["j10", "j12"],
    };
    robot.fixed_tendons = vec![FixedTendon {
        name: "t2".into(),
        joints: vec![
            (tendon_joints[0].into(), 0.7),
            (tendon_joints[1].into(), -1.3),
        ],
        actuator_force_range: (!per_element).then_some([-2.0, 0.4]),
    }];
    robot.joint_actuator_force_ranges = vec![("j13".into(), [-6.0, 4.0])];
    robot.native_actuators = robot.tendons[..2]
        .iter()
        .map(|t| native_motor(Transmission::Tendon, t))
        .collect();
    let dc = DcMotorCfg {
        stiffness: 40.0,
        damping: 1.5,
        effort_limit: 23.7,
        saturation_effort: 30.0,
        velocity_limit: 30.1,
    };
    let jittery = DelayCfg {
        hold_prob: 0.3,
        update_period: 2,
        ..DelayCfg::new(0, 3)
    };
    let mut groups = vec![
        GroupCfg::new("hips", ["j(0|3|6|9)"], dc).with_delay(jittery.clone()),
        GroupCfg::new("knees", ["j(1|4|7|10)"], dc).with_delay(jittery),
        GroupCfg::new(
            "feet",
            ["j2", "j5"],
            IdealPdCfg::new(25.0, 0.5).with_effort_limit(8.0),
        )
        .with_delay(DelayCfg::per_reset(1, 4)),
        GroupCfg::new(
            "toes",
            ["j8"],
            BuiltinPositionCfg {
                stiffness: 10.0,
                damping: 0.1,
                effort_limit: None,
            },
        )
        .with_delay(DelayCfg {
            share: DelayShare::Own,
            ..DelayCfg::constant(2)
        }),
        GroupCfg::new("tail", ["j11"], IdealPdCfg::new(5.0, 0.2)),
        GroupCfg::new("cables", ["t(0|1)"], WrappedCfg::default())
            .with_transmission(Transmission::Tendon),
        GroupCfg::new(
            "servo",
            ["j13"],
            MjPositionCfg {
                kp: 30.0,
                kv: Some(1.5),
                timeconst: 0.05,
                ctrl_range: Some([-0.8, 0.8]),
                ..MjPositionCfg::default()
            }
            .position()
            .unwrap(),
        )
        .with_delay(DelayCfg {
            share: DelayShare::Own,
            ..DelayCfg::constant(1)
        }),
        GroupCfg::new(
            "damper",
            ["j13"],
            MjGeneralCfg::damper(2.0, [0.0, 1.0]).with_force_range([-3.0, 3.0]),
        ),
        GroupCfg::new(
            "intvel",
            ["j14"],
            MjGeneralCfg {
                act_early: true,
                ..MjPositionCfg {
                    kp: 12.0,
                    act_range: Some([-0.5, 0.6]),
                    gear: 2.0,
                    ..MjPositionCfg::default()
                }
                .intvelocity()
                .unwrap()
            },
        ),
        GroupCfg::new(
            "cylinder",
            ["j15"],
            MjGeneralCfg::cylinder(0.03, 1.5, [0.1, -0.4, -0.2]).with_force_range([-2.5, 2.5]),
        ),
        GroupCfg::new(
            "muscle",
            ["j15"],
            BuiltinMuscleCfg {
                length_range: (-1.2, 1.1),
                acc0: 3.0,
                tausmooth: 0.2,
                ..BuiltinMuscleCfg::default()
            },
        )
        .with_computed_force(),
        GroupCfg::new(
            "tendon_muscle",
            ["t2"],
            MjMuscleCfg {
                length_range: [-2.0, 2.0],
                force: 4.0,
                ..MjMuscleCfg::default()
            }
            .compile()
            .unwrap(),
        )
        .with_transmission(Transmission::Tendon),
        GroupCfg::new(
            "tendon_motor",
            ["t2"],
            MjGeneralCfg::motor()
                .with_gear(1.5)
                .with_command_field(CommandField::Position),
        )
        .with_transmission(Transmission::Tendon),
        GroupCfg::new(
            "mlp",
            ["j1(6|7)"],
            LearnedMlpCfg::new(parity_mlp(), 6.0, 9.0, 20.0)
                .with_taps([0, 2, 5])
                .with_scales(-0.8, 0.05, 3.0)
                .with_input_order(InputOrder::VelPos)
                .with_history_init(HistoryInit::Zeros),
        )
        .with_delay(DelayCfg::constant(1)),
        GroupCfg::new(
            "lstm",
            ["j18"],
            LstmNetCfg::new(parity_lstm(), 5.0, 8.0, 25.0),
        ),
    ];
    if per_element {
        groups.retain(|g| !["damper", "cylinder", "tendon_motor"].contains(&&*g.name));
    }
    let options = PlanOptions {
        sort_actuators,
        seed,
        ..PlanOptions::default()
    };
    Plan::new(&robot, groups, num_envs, options).expect("the parity scenario compiles")
}

/// Deterministic weights in [-scale, scale).
fn weights(n: usize, seed: f32, scale: f32) -> Vec<f32> {
    (0..n)
        .map(|i| ((i as f32 + 1.0) * seed).sin() * scale)
        .collect()
}

/// A 6 → 12 (elu) → 8 (softsign) → 1 (tanh) MLP.
fn parity_mlp() -> Mlp {
    Mlp::new(
        "parity",
        vec![
            Dense::new(
                "0",
                12,
                6,
                weights(72, 0.77, 0.9),
                weights(12, 1.3, 0.2),
                Activation::Elu,
            ),
            Dense::new(
                "1",
                8,
                12,
                weights(96, 0.41, 0.6),
                weights(8, 2.1, 0.2),
                Activation::Softsign,
            ),
            Dense::new(
                "2",
                1,
                8,
                weights(8, 0.93, 1.2),
                vec![0.1],
                Activation::Tanh,
            ),
        ],
    )
    .unwrap()
}

/// A 2-layer LSTM, hidden 5, with a 5 → 4 (relu) → 1 (sigmoid) head.
fn parity_lstm() -> LstmNet {
    let layer = |k: usize, inputs: usize| LstmLayer {
        name: ("lstm.".into(), format!("_l{k}")),
        inputs,
        hidden: 5,
        weight_ih: weights(20 * inputs, 0.3 + k as f32, 1.1),
        weight_hh: weights(100, 0.7 + k as f32, 0.8),
        bias_ih: weights(20, 1.7, 0.3),
        bias_hh: weights(20, 2.3, 0.3),
    };
    LstmNet::new(
        "parity",
        vec![layer(0, 2), layer(1, 5)],
        vec![
            Dense::new(
                "h0",
                4,
                5,
                weights(20, 0.57, 1.0),
                weights(4, 0.9, 0.1),
                Activation::Relu,
            ),
            Dense::new(
                "h1",
                1,
                4,
                weights(4, 1.9, 2.0),
                vec![-0.2],
                Activation::Sigmoid,
            ),
        ],
    )
    .unwrap()
}

/// One group per delay buffer, to read its states through.
const DELAYED: [&str; 5] = ["hips", "feet", "toes", "servo", "mlp"];

/// The MuJoCo-law groups, to compare activations and act_dots through.
const MUJOCO: [&str; 7] = [
    "servo",
    "damper",
    "intvel",
    "cylinder",
    "muscle",
    "tendon_muscle",
    "tendon_motor",
];

/// The command column of tendon `t2` (after the 19 joints and t0, t1).
const T2_COLUMN: usize = 21;

fn random_cmd(rng: &mut Rng, num_envs: usize, num_targets: usize) -> ActuatorCmd {
    let mut cmd = ActuatorCmd::zeros(num_envs, num_targets);
    for i in 0..num_envs * num_targets {
        cmd.position_target[i] = rng.range(-1.0, 1.0);
        cmd.velocity_target[i] = rng.range(-2.0, 2.0);
        cmd.effort_target[i] = rng.range(-3.0, 3.0);
        cmd.pos[i] = rng.range(-1.0, 1.0);
        // Past the DC corner velocity now and then.
        cmd.vel[i] = rng.range(-45.0, 45.0);
    }
    // A few envs get a finite target so large that the unlimited PD of j11
    // overflows: a non-finite output, which zeroes the env too.
    for env in 0..num_envs {
        if rng.chance(0.03) {
            cmd.position_target[env * num_targets + 11] = 3e38;
        }
    }
    // A few envs get a control beyond MuJoCo's 1e10 guard on the unlimited
    // tendon muscle: every MuJoCo control of the env is then 0.
    for env in 0..num_envs {
        if rng.chance(0.03) {
            cmd.effort_target[env * num_targets + T2_COLUMN] = -2e10;
        }
    }
    // A few envs get a NaN or an infinity somewhere (column 12 is unclaimed:
    // it must not zero the env).
    for env in 0..num_envs {
        if rng.chance(0.04) {
            let at = env * num_targets + rng.below(num_targets);
            let bad = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY][rng.below(3)];
            match rng.below(5) {
                0 => cmd.position_target[at] = bad,
                1 => cmd.velocity_target[at] = bad,
                2 => cmd.effort_target[at] = bad,
                3 => cmd.pos[at] = bad,
                _ => cmd.vel[at] = bad,
            }
        }
    }
    cmd
}

/// A backend under test, seen through the way it takes its output.
trait Subject {
    fn name(&self) -> &'static str;
    fn tolerance(&self) -> Tolerance;
    fn backend(&mut self) -> &mut dyn Backend;
    /// Poisons the output with NaN, steps, and returns ctrl.
    fn step_poisoned(&mut self, cmd: &ActuatorCmd) -> Vec<f32>;
}

/// The CPU backend writing into a caller's slice.
struct CpuInto(CpuBackend);

impl Subject for CpuInto {
    fn name(&self) -> &'static str {
        "cpu (step_into)"
    }
    fn tolerance(&self) -> Tolerance {
        Tolerance::EXACT
    }
    fn backend(&mut self) -> &mut dyn Backend {
        &mut self.0
    }
    fn step_poisoned(&mut self, cmd: &ActuatorCmd) -> Vec<f32> {
        let mut out = vec![f32::NAN; self.0.plan().num_envs() * self.0.plan().num_ctrl()];
        self.0.step_into(cmd, &mut out).unwrap();
        out
    }
}

/// The GPU backend through `step` and `read_ctrl`, its own ctrl buffer
/// poisoned first.
struct GpuStep(WgpuBackend);

impl Subject for GpuStep {
    fn name(&self) -> &'static str {
        "wgpu (step)"
    }
    fn tolerance(&self) -> Tolerance {
        Tolerance::GPU
    }
    fn backend(&mut self) -> &mut dyn Backend {
        &mut self.0
    }
    fn step_poisoned(&mut self, cmd: &ActuatorCmd) -> Vec<f32> {
        let n = self.0.plan().num_envs() * self.0.plan().num_ctrl();
        self.0.context().queue().write_buffer(
            self.0.ctrl_buffer(),
            0,
            bytemuck::cast_slice(&vec![f32::NAN; n]),
        );
        self.0.step(cmd).unwrap();
        let mut out = vec![0.0; n];
        self.0.read_ctrl(&mut out).unwrap();
        out
    }
}

/// The GPU backend through `encode_step` over buffers the test owns.
struct GpuEncoded {
    backend: WgpuBackend,
    cmd: wgpu::Buffer,
    out: wgpu::Buffer,
}

impl GpuEncoded {
    fn new(ctx: &GpuContext, plan: Plan) -> Self {
        let backend = WgpuBackend::new(ctx, plan).unwrap();
        let buffer = |size, usage| {
            ctx.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some("test-owned"),
                size,
                usage: usage | wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        GpuEncoded {
            cmd: buffer(backend.cmd_bytes(), wgpu::BufferUsages::empty()),
            out: buffer(backend.ctrl_bytes(), wgpu::BufferUsages::COPY_SRC),
            backend,
        }
    }
}

/// Reads a whole f32 buffer back (the test's own readback, not the backend's).
pub fn read_f32s(ctx: &GpuContext, src: &wgpu::Buffer) -> Vec<f32> {
    let staging = ctx.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("test readback"),
        size: src.size(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = ctx.device().create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(src, 0, &staging, 0, src.size());
    ctx.queue().submit([encoder.finish()]);
    staging.map_async(wgpu::MapMode::Read, .., |r| r.unwrap());
    ctx.device()
        .poll(wgpu::PollType::wait_indefinitely())
        .unwrap();
    let values = bytemuck::cast_slice(&staging.get_mapped_range(..).unwrap()).to_vec();
    staging.unmap();
    values
}

impl Subject for GpuEncoded {
    fn name(&self) -> &'static str {
        "wgpu (encode_step, caller buffers)"
    }
    fn tolerance(&self) -> Tolerance {
        Tolerance::GPU
    }
    fn backend(&mut self) -> &mut dyn Backend {
        &mut self.backend
    }
    fn step_poisoned(&mut self, cmd: &ActuatorCmd) -> Vec<f32> {
        let ctx = self.backend.context().clone();
        let plane = cmd.pos.len() as u64 * 4;
        for (f, field) in cmd.fields().into_iter().enumerate() {
            ctx.queue()
                .write_buffer(&self.cmd, f as u64 * plane, bytemuck::cast_slice(field));
        }
        let n = (self.out.size() / 4) as usize;
        ctx.queue()
            .write_buffer(&self.out, 0, bytemuck::cast_slice(&vec![f32::NAN; n]));
        let mut encoder = ctx.device().create_command_encoder(&Default::default());
        self.backend
            .encode_step(&mut encoder, &self.cmd, &self.out)
            .unwrap();
        ctx.queue().submit([encoder.finish()]);
        read_f32s(&ctx, &self.out)
    }
}

/// A setter or reset, applied to the reference and the subject alike.
type Op = Box<dyn Fn(&mut dyn Backend)>;

/// Runs one scenario on `subject` and the reference side by side.
fn run_parity(subject: &mut dyn Subject, plan: Plan, data_seed: u64, steps: usize) {
    let mut reference = CpuBackend::new(plan.clone());
    let mut rng = Rng(data_seed);
    let (num_envs, num_targets, num_ctrl) = (plan.num_envs(), plan.num_targets(), plan.num_ctrl());
    let name = subject.name();
    let tol = subject.tolerance();
    let mut want = vec![0.0; num_envs * num_ctrl];
    let (mut worst, mut differing) = (0.0f32, 0usize);
    for step in 0..steps {
        // Setters and resets, the same on both sides.
        let mut ops: Vec<Op> = Vec::new();
        if step % 5 == 1 {
            let envs = rng.subset(num_envs, 0.4);
            let kp: Vec<f32> = envs.iter().map(|_| rng.range(10.0, 80.0)).collect();
            ops.push(Box::new(move |b| {
                b.set_gains("hips", EnvIds::List(&envs), Some(Values::PerEnv(&kp)), None)
                    .unwrap()
            }));
        }
        if step % 6 == 2 {
            let envs = rng.subset(num_envs, 0.5);
            let limits: Vec<f32> = (0..envs.len() * 2).map(|_| rng.range(1.0, 10.0)).collect();
            ops.push(Box::new(move |b| {
                b.set_effort_limit("feet", EnvIds::List(&envs), Values::PerEnvTarget(&limits))
                    .unwrap()
            }));
        }
        if step % 8 == 3 {
            let sat = rng.range(25.0, 35.0);
            ops.push(Box::new(move |b| {
                b.set_param(
                    "knees",
                    "saturation_effort",
                    EnvIds::All,
                    Values::Scalar(sat),
                )
                .unwrap()
            }));
        }
        if step % 9 == 4 {
            let envs = rng.subset(num_envs, 0.5);
            let lags: Vec<u32> = envs.iter().map(|_| rng.below(6) as u32).collect();
            ops.push(Box::new(move |b| {
                b.set_lags("hips", EnvIds::List(&envs), Lags::PerEnv(&lags))
                    .unwrap()
            }));
        }
        if step % 5 == 3 {
            let envs = rng.subset(num_envs, 0.5);
            let limits: Vec<f32> = envs.iter().map(|_| rng.range(2.0, 8.0)).collect();
            ops.push(Box::new(move |b| {
                b.set_effort_limit("mlp", EnvIds::List(&envs), Values::PerEnv(&limits))
                    .unwrap()
            }));
        }
        if step % 7 == 5 {
            let envs = rng.subset(num_envs, 0.3);
            ops.push(Box::new(move |b| b.reset(EnvIds::List(&envs)).unwrap()));
        }
        if step == steps / 2 {
            ops.push(Box::new(|b| b.reset(EnvIds::All).unwrap()));
        }
        if step % 4 == 2 {
            let envs = rng.subset(num_envs, 0.5);
            let act: Vec<f32> = envs.iter().map(|_| rng.range(-0.3, 1.2)).collect();
            ops.push(Box::new(move |b| {
                let values = Values::PerEnv(&act);
                b.set_state("muscle", "act", EnvIds::List(&envs), values)
                    .unwrap()
            }));
        }
        for op in &ops {
            op(&mut reference);
            op(subject.backend());
        }

        let cmd = random_cmd(&mut rng, num_envs, num_targets);
        reference.step(&cmd).unwrap();
        reference.read_ctrl(&mut want).unwrap();
        let got = subject.step_poisoned(&cmd);
        for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
            if g != w {
                differing += 1;
                worst = worst.max((g - w).abs());
            }
            if !tol.accepts(g, w) {
                let (env, c) = (i / num_ctrl, i % num_ctrl);
                let column = &plan.ctrl_columns()[c];
                let group = &plan.groups()[column.group].cfg;
                panic!(
                    "[{name}] step {step}, env {env}, target `{}` (group `{}`, {}): \
                     {name} {g:e}, cpu {w:e} (tolerance {tol:?})",
                    column.target,
                    group.name,
                    group.actuator.kind_name()
                );
            }
        }
        let want_bad = reference.nonfinite_envs().unwrap().to_vec();
        let got_bad = subject.backend().nonfinite_envs().unwrap().to_vec();
        assert_eq!(got_bad, want_bad, "[{name}] step {step}: non-finite envs");
        // Each group's activation (its one target's), and the act_dot plane.
        let (mut w_rate, mut g_rate) = (want.clone(), vec![f32::NAN; want.len()]);
        reference.read_output("act_dot", &mut w_rate).unwrap();
        (subject.backend())
            .read_output("act_dot", &mut g_rate)
            .unwrap();
        for group in MUJOCO {
            // (The per-element scenario has fewer.)
            let Ok(index) = plan.group_index(group) else {
                continue;
            };
            let c = plan.groups()[index].ctrl_columns[0];
            let (mut w, mut g) = (vec![0.0; num_envs], vec![f32::NAN; num_envs]);
            reference.read_state(group, "act", &mut w).unwrap();
            subject.backend().read_state(group, "act", &mut g).unwrap();
            let rate = |plane: &[f32]| -> Vec<f32> {
                plane.iter().skip(c).step_by(num_ctrl).copied().collect()
            };
            let pairs = [
                ("activation", g, w),
                ("act_dot", rate(&g_rate), rate(&w_rate)),
            ];
            for (what, g, w) in pairs {
                if let Some(env) = (0..num_envs).find(|&e| !tol.accepts(g[e], w[e])) {
                    panic!(
                        "[{name}] step {step}, env {env}: `{group}` {what}: {name} {:e}, cpu {:e}",
                        g[env], w[env]
                    );
                }
            }
        }
        let joints = plan.mj().num_joints;
        let (mut w, mut g) = (
            vec![0.0; num_envs * joints],
            vec![f32::NAN; num_envs * joints],
        );
        reference.read_joint_effort(&mut w).unwrap();
        subject.backend().read_joint_effort(&mut g).unwrap();
        if let Some(i) = (0..w.len()).find(|&i| !tol.accepts(g[i], w[i])) {
            panic!(
                "[{name}] step {step}, env {}, joint j{}: joint effort {name} {:e}, cpu {:e}",
                i / joints,
                i % joints,
                g[i],
                w[i]
            );
        }
        for group in DELAYED {
            let mut w = vec![DelayState::default(); num_envs];
            let mut g = w.clone();
            reference.read_delay_states(group, &mut w).unwrap();
            subject.backend().read_delay_states(group, &mut g).unwrap();
            if let Some(env) = (0..num_envs).find(|&e| g[e] != w[e]) {
                panic!(
                    "[{name}] step {step}, env {env}: delay state of `{group}`: {name} {:?}, cpu {:?}",
                    g[env], w[env]
                );
            }
        }
    }
    println!(
        "parity [{name}] {num_envs} envs × {num_ctrl} ctrl × {steps} steps: \
         {differing} efforts not bit-equal to the CPU, worst |Δ| {worst:e}"
    );
    for (group, param) in [
        ("hips", "stiffness"),
        ("feet", "effort_limit"),
        ("knees", "saturation_effort"),
    ] {
        let n = num_envs
            * plan.groups()[plan.group_index(group).unwrap()]
                .targets
                .len();
        let (mut w, mut g) = (vec![0.0; n], vec![1.0; n]);
        reference.read_param(group, param, &mut w).unwrap();
        subject.backend().read_param(group, param, &mut g).unwrap();
        assert_eq!(g, w, "[{name}] {group}.{param}");
    }
}

/// (envs, sort_actuators, plan seed, data seed): a single env, sizes that
/// are not multiples of the workgroup, both column orders.
const CASES: [(usize, bool, u32, u64); 4] = [
    (1, false, 0, 1),
    (67, false, 7, 2),
    (130, true, 11, 3),
    (257, true, 0xdead_beef, 4),
];
const STEPS: usize = 40;

#[test]
fn parity_cpu_step_into() {
    for (envs, sort, seed, data) in CASES {
        let plan = scenario(envs, sort, seed);
        run_parity(
            &mut CpuInto(CpuBackend::new(plan.clone())),
            plan,
            data,
            STEPS,
        );
    }
}

/// The scenario as is, whose MuJoCo stage runs per env (two dispatches a
/// step), and per element, in one dispatch and in two.
#[test]
fn parity_wgpu_step() {
    let Some(ctx) = gpu() else { return };
    for (envs, sort, seed, data) in CASES {
        for (per_element, dispatches, count) in [
            (false, Dispatches::One, 2),
            (true, Dispatches::One, 1),
            (true, Dispatches::Two, 2),
        ] {
            let plan = scenario_with(envs, sort, seed, per_element);
            let mut backend = WgpuBackend::new(&ctx, plan.clone()).unwrap();
            assert_eq!(backend.set_dispatches(dispatches).unwrap(), count);
            run_parity(&mut GpuStep(backend), plan, data, STEPS);
        }
    }
}

#[test]
fn parity_wgpu_encode_step_over_caller_buffers() {
    let Some(ctx) = gpu() else { return };
    for (envs, sort, seed, data) in CASES {
        let plan = scenario(envs, sort, seed);
        run_parity(&mut GpuEncoded::new(&ctx, plan.clone()), plan, data, STEPS);
    }
}

/// `gpu_step_times` and `gpu_stage_times` step as `step` does, and time
/// each step (or each of its one or two dispatches).
#[test]
fn gpu_step_times_time_each_step_and_advance_as_steps_do() {
    let Some(ctx) = gpu() else { return };
    let plan = scenario_with(67, false, 7, true);
    let mut rng = Rng(5);
    let (first, next) = (
        random_cmd(&mut rng, 67, plan.num_targets()),
        random_cmd(&mut rng, 67, plan.num_targets()),
    );
    let mut timed = WgpuBackend::new(&ctx, plan.clone()).unwrap();
    let mut stepped = WgpuBackend::new(&ctx, plan.clone()).unwrap();
    // More steps than one encoder's 256.
    let Some(times) = timed.gpu_step_times(&first, 300).unwrap() else {
        assert!(!ctx.has_timestamps());
        return;
    };
    assert_eq!(times.len(), 300);
    assert!(
        times.iter().all(|t| t.is_finite() && *t >= 0.0),
        "{times:?}"
    );
    assert!(times.iter().any(|&t| t > 0.0), "{times:?}");
    // The scenario's MuJoCo servos keep state, which each law stage
    // commits.
    assert!(plan.num_state_slots() > 0);
    // Each dispatch timed: one, then two.
    for (dispatches, count) in [(Dispatches::One, 1), (Dispatches::Two, 2)] {
        assert_eq!(timed.set_dispatches(dispatches).unwrap(), count);
        let stages = timed.gpu_stage_times(&first, 10).unwrap().unwrap();
        assert_eq!(stages.len(), 10);
        for t in &stages {
            let times = [Some(t.law_us), t.output_us];
            assert_eq!(times.iter().flatten().count(), count, "{t:?}");
            assert!(
                times.iter().flatten().all(|t| t.is_finite() && *t >= 0.0),
                "{t:?}"
            );
        }
    }
    for _ in 0..320 {
        stepped.step(&first).unwrap();
    }
    assert_eq!(timed.steps_taken(), 320);
    let mut ctrl = [
        vec![0.0; 67 * plan.num_ctrl()],
        vec![1.0; 67 * plan.num_ctrl()],
    ];
    for (backend, ctrl) in [&mut timed, &mut stepped].into_iter().zip(&mut ctrl) {
        backend.step(&next).unwrap();
        backend.read_ctrl(ctrl).unwrap();
    }
    assert_eq!(ctrl[0], ctrl[1]);
    assert!(timed.gpu_step_times(&ActuatorCmd::zeros(2, 1), 1).is_err());
    assert!(timed.gpu_stage_times(&ActuatorCmd::zeros(2, 1), 1).is_err());
}

/// How many dispatches a step takes for each [`Dispatches`]: one only
/// where an env's columns fit in a workgroup (256 do, 257 do not) and no
/// MuJoCo member needs the per-env stage; by default only on a hardware
/// GPU. A plan of exactly a workgroup's columns steps as the CPU does.
#[test]
fn a_step_is_one_dispatch_where_the_plan_and_the_adapter_allow_it() {
    let Some(ctx) = gpu() else { return };
    let plan = |joints: usize, mujoco: bool| {
        let robot = Robot::from_joints((0..joints).map(|i| format!("j{i}")));
        let group = match mujoco {
            false => GroupCfg::new("g", [".*"], IdealPdCfg::new(20.0, 0.5)),
            true => GroupCfg::new(
                "g",
                [".*"],
                MjPositionCfg {
                    kp: 20.0,
                    ..MjPositionCfg::default()
                }
                .position()
                .unwrap(),
            ),
        };
        Plan::new(&robot, vec![group], 3, PlanOptions::default()).unwrap()
    };
    // Dispatches::Auto's count where the plan allows one.
    let by_default = if ctx.is_software() { 2 } else { 1 };
    // (plan, dispatches with Auto, with One)
    let cases = [
        (plan(29, false), by_default, 1),
        (plan(256, false), by_default, 1),
        (plan(257, false), 2, 2),
        (plan(29, true), by_default, 1),
        (scenario(3, false, 0), 2, 2),
    ];
    for (plan, auto, one) in cases {
        let what = format!("{} ctrl columns", plan.num_ctrl());
        let mut subject = WgpuBackend::new(&ctx, plan.clone()).unwrap();
        assert_eq!(subject.dispatches_per_step(), auto, "{what}");
        assert_eq!(
            subject.set_dispatches(Dispatches::Two).unwrap(),
            2,
            "{what}"
        );
        assert_eq!(
            subject.set_dispatches(Dispatches::Auto).unwrap(),
            auto,
            "{what}"
        );
        assert_eq!(
            subject.set_dispatches(Dispatches::One).unwrap(),
            one,
            "{what}"
        );
        let mut reference = CpuBackend::new(plan.clone());
        let mut rng = Rng(plan.num_ctrl() as u64);
        let n = 3 * plan.num_ctrl();
        let (mut want, mut got) = (vec![0.0; n], vec![f32::NAN; n]);
        for _ in 0..3 {
            let cmd = random_cmd(&mut rng, 3, plan.num_targets());
            reference.step(&cmd).unwrap();
            subject.step(&cmd).unwrap();
            reference.read_ctrl(&mut want).unwrap();
            subject.read_ctrl(&mut got).unwrap();
            for (g, w) in got.iter().zip(&want) {
                assert!(Tolerance::GPU.accepts(*g, *w), "{what}: {g} against {w}");
            }
            assert_eq!(
                subject.nonfinite_envs().unwrap(),
                reference.nonfinite_envs().unwrap(),
                "{what}"
            );
        }
    }
}

/// A caller's device ([`GpuContext::from_device`]) with small limits: at
/// most 16 workgroups per dimension, so that every dispatch of 300 envs ×
/// 29 columns spills into y (`thread_index`, `env_stage`), in one dispatch
/// and in two; and workgroups of at most 128 threads, which leave only two.
/// Each steps as the CPU does.
/// A control past MuJoCo's bound zeroes every control of its env, so its
/// actuators run again (in one dispatch, each in its own thread after a
/// barrier): a position servo (kp 1e37 through a gear of 100: its force
/// is 1e37·(u − 100·q), its joint effort 100 times that) beside a motor.
/// Env 0: the motor's control is wild and the servo's target far, so the
/// first run's effort is not finite and the second's is (kept). Env 1:
/// wild too, its servo's force finite and its effort not, either way
/// (zeroed). Env 2: no wild control, both near zero (kept). Ctrl, joint efforts and the report as the CPU's,
/// in one dispatch and in two.
#[test]
fn a_wild_control_runs_its_envs_actuators_again_with_zero_controls() {
    let Some(ctx) = gpu() else { return };
    let robot = Robot::from_joints(["j0", "j1"]);
    let servo = MjPositionCfg {
        kp: 1e37,
        gear: 100.0,
        ..MjPositionCfg::default()
    };
    let groups = vec![
        GroupCfg::new("servo", ["j0"], servo.position().unwrap()),
        GroupCfg::new(
            "motor",
            ["j1"],
            MjGeneralCfg::motor().with_command_field(CommandField::Effort),
        ),
    ];
    let plan = Plan::new(&robot, groups, 3, PlanOptions::default()).unwrap();
    let mut cmd = ActuatorCmd::zeros(3, 2);
    // (servo target, servo joint position, motor control) per env.
    for (env, (target, pos, control)) in [(0.5, 0.001, 5e10), (0.0, 0.01, -5e10), (0.001, 0.0, 1.0)]
        .into_iter()
        .enumerate()
    {
        cmd.position_target[2 * env] = target;
        cmd.pos[2 * env] = pos;
        cmd.effort_target[2 * env + 1] = control;
    }
    let mut reference = CpuBackend::new(plan.clone());
    reference.step(&cmd).unwrap();
    let mut want = vec![0.0; 6];
    reference.read_ctrl(&mut want).unwrap();
    let mut want_effort = vec![0.0; 6];
    reference.read_joint_effort(&mut want_effort).unwrap();
    assert_eq!(reference.nonfinite_envs().unwrap(), [1]);
    // Env 0's servo ran again with a zero control: a finite effort, not 0.
    assert!(want_effort[0].is_finite() && want_effort[0] != 0.0);
    for (dispatches, count) in [(Dispatches::One, 1), (Dispatches::Two, 2)] {
        let mut subject = WgpuBackend::new(&ctx, plan.clone()).unwrap();
        assert_eq!(subject.set_dispatches(dispatches).unwrap(), count);
        subject.step(&cmd).unwrap();
        let (mut got, mut got_effort) = (vec![f32::NAN; 6], vec![f32::NAN; 6]);
        subject.read_ctrl(&mut got).unwrap();
        subject.read_joint_effort(&mut got_effort).unwrap();
        assert_eq!(subject.nonfinite_envs().unwrap(), [1], "{dispatches:?}");
        for (got, want) in [(&got, &want), (&got_effort, &want_effort)] {
            for (g, w) in got.iter().zip(want.iter()) {
                assert!(
                    Tolerance::GPU.accepts(*g, *w),
                    "{dispatches:?}: {got:?} against {want:?}"
                );
            }
        }
    }
}

#[test]
fn a_device_with_small_limits_steps_in_workgroups_spilled_into_y() {
    let Some(shared) = gpu() else { return };
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter =
        pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))
            .unwrap();
    let device = |per_dimension: u32, invocations: u32| {
        let limits = wgpu::Limits {
            max_compute_workgroups_per_dimension: per_dimension,
            max_compute_invocations_per_workgroup: invocations,
            max_compute_workgroup_size_x: invocations,
            ..adapter.limits()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            required_limits: limits,
            required_features: shared.device().features(),
            ..Default::default()
        }))
        .unwrap();
        GpuContext::from_device(device, queue).unwrap()
    };
    let plan = scenario_with(300, false, 5, true);
    for (ctx, one) in [(device(16, 256), 1), (device(65535, 128), 2)] {
        for (dispatches, count) in [(Dispatches::One, one), (Dispatches::Two, 2)] {
            let mut backend = WgpuBackend::new(&ctx, plan.clone()).unwrap();
            assert_eq!(backend.set_dispatches(dispatches).unwrap(), count);
            run_parity(&mut GpuStep(backend), plan.clone(), 6, 8);
        }
    }
}

/// Decimation on the device: four steps recorded into one encoder and
/// submitted once, each after a copy that writes its command into the
/// command buffer (as a simulator's own kernels write the joint state
/// between physics steps) and each followed by a copy of its ctrl; every
/// step's ctrl as the CPU's, stepping the same commands in turn, with
/// either dispatch layout, over three submissions.
#[test]
fn steps_recorded_into_one_encoder_with_commands_between_them_run_in_order() {
    let Some(ctx) = gpu() else { return };
    const SUBSTEPS: usize = 4;
    let device = ctx.device();
    for dispatches in [Dispatches::One, Dispatches::Two] {
        let plan = scenario_with(67, true, 3, true);
        let (num_envs, num_ctrl) = (plan.num_envs(), plan.num_ctrl());
        let mut reference = CpuBackend::new(plan.clone());
        let mut subject = GpuEncoded::new(&ctx, plan.clone());
        subject.backend.set_dispatches(dispatches).unwrap();
        let ctrl_bytes = subject.backend.ctrl_bytes();
        let results = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("test substeps' ctrl"),
            size: SUBSTEPS as u64 * ctrl_bytes,
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let mut rng = Rng(21);
        let mut want = vec![0.0; num_envs * num_ctrl];
        for round in 0..3 {
            let mut encoder = device.create_command_encoder(&Default::default());
            let mut wants = Vec::new();
            for k in 0..SUBSTEPS {
                let cmd = random_cmd(&mut rng, num_envs, plan.num_targets());
                let contents: Vec<f32> = cmd.fields().concat();
                let source = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("test substep command"),
                    contents: bytemuck::cast_slice(&contents),
                    usage: wgpu::BufferUsages::COPY_SRC,
                });
                let bytes = subject.backend.cmd_bytes();
                encoder.copy_buffer_to_buffer(&source, 0, &subject.cmd, 0, bytes);
                subject
                    .backend
                    .encode_step(&mut encoder, &subject.cmd, &subject.out)
                    .unwrap();
                let at = k as u64 * ctrl_bytes;
                encoder.copy_buffer_to_buffer(&subject.out, 0, &results, at, ctrl_bytes);
                reference.step(&cmd).unwrap();
                reference.read_ctrl(&mut want).unwrap();
                wants.push(want.clone());
            }
            ctx.queue().submit([encoder.finish()]);
            let got = read_f32s(&ctx, &results);
            for (k, (got, want)) in got.chunks_exact(want.len()).zip(&wants).enumerate() {
                if let Some(i) = (0..want.len()).find(|&i| !Tolerance::GPU.accepts(got[i], want[i]))
                {
                    panic!(
                        "{dispatches:?}, round {round}, substep {k}, env {}, column {}: \
                         wgpu {:e}, cpu {:e}",
                        i / num_ctrl,
                        i % num_ctrl,
                        got[i],
                        want[i]
                    );
                }
            }
            for group in DELAYED {
                let mut w = vec![DelayState::default(); num_envs];
                let mut g = w.clone();
                reference.read_delay_states(group, &mut w).unwrap();
                (subject.backend).read_delay_states(group, &mut g).unwrap();
                assert_eq!(
                    g, w,
                    "{dispatches:?}, round {round}: `{group}`'s delay states"
                );
            }
        }
    }
}

#[test]
fn encode_step_checks_the_caller_buffers_and_read_ctrl_points_at_them() {
    let Some(ctx) = gpu() else { return };
    let plan = scenario(3, false, 0);
    let mut subject = GpuEncoded::new(&ctx, plan.clone());
    let small = ctx.device().create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 16,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    let mut encoder = ctx.device().create_command_encoder(&Default::default());
    let err = subject
        .backend
        .encode_step(&mut encoder, &small, &subject.out)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("command buffer") && err.contains("16 bytes"),
        "{err}"
    );
    subject.step_poisoned(&ActuatorCmd::zeros(3, plan.num_targets()));
    let mut ctrl = vec![0.0; 3 * plan.num_ctrl()];
    let err = subject
        .backend
        .read_ctrl(&mut ctrl)
        .unwrap_err()
        .to_string();
    assert!(err.contains("encode_step"), "{err}");
    // A plain step makes the backend's own buffer current again.
    subject
        .backend
        .step(&ActuatorCmd::zeros(3, plan.num_targets()))
        .unwrap();
    subject.backend.read_ctrl(&mut ctrl).unwrap();
}

/// A step copies for the host what was read after the step before it
/// (ctrl, the non-finite report, joint efforts). Whatever was read before,
/// and whichever way the last step ran (`step`, `encode_step`,
/// `gpu_step_times`), each read returns the last step's values: the CPU
/// reference's, stepped alike.
#[test]
fn reads_return_the_last_step_whatever_was_read_before_it() {
    let Some(ctx) = gpu() else { return };
    let num_envs = 67;
    let plan = scenario(num_envs, false, 7);
    let (t, nc, joints) = (plan.num_targets(), plan.num_ctrl(), plan.mj().num_joints);
    let mut reference = CpuBackend::new(plan.clone());
    let mut encoded = GpuEncoded::new(&ctx, plan);
    let mut rng = Rng(9);
    // Per step: how it runs, then what is read (ctrl, report, efforts).
    // `step` at 0 reads nothing, 1–2 read everything, 3 only the report, …
    let schedule: [(&str, [bool; 3]); 13] = [
        ("step", [false; 3]),
        ("step", [true; 3]),
        ("step", [true; 3]),
        ("step", [false, true, false]),
        ("step", [true, false, true]),
        ("step", [true, true, true]),
        ("encode", [false, true, true]),
        ("step", [true, true, true]),
        ("step", [true, true, true]),
        ("timed", [false, true, true]),
        ("step", [true, true, true]),
        ("step", [false; 3]),
        ("step", [true, true, true]),
    ];
    let close = |got: &[f32], want: &[f32]| {
        (got.iter().zip(want)).all(|(&g, &w)| Tolerance::GPU.accepts(g, w))
    };
    for (i, (how, [ctrl, report, effort])) in schedule.into_iter().enumerate() {
        let cmd = random_cmd(&mut rng, num_envs, t);
        reference.step(&cmd).unwrap();
        match how {
            "step" => encoded.backend.step(&cmd).unwrap(),
            "encode" => drop(encoded.step_poisoned(&cmd)),
            _ => {
                if encoded.backend.gpu_step_times(&cmd, 1).unwrap().is_none() {
                    encoded.backend.step(&cmd).unwrap();
                }
            }
        }
        let subject = &mut encoded.backend;
        // Each read twice: the second from the same mapping.
        for _ in 0..2 {
            if ctrl {
                let (mut w, mut g) = (vec![0.0; num_envs * nc], vec![f32::NAN; num_envs * nc]);
                reference.read_ctrl(&mut w).unwrap();
                subject.read_ctrl(&mut g).unwrap();
                assert!(close(&g, &w), "step {i} ({how}): ctrl");
            }
            if report {
                let want = reference.nonfinite_envs().unwrap().to_vec();
                assert_eq!(subject.nonfinite_envs().unwrap(), want, "step {i} ({how})");
            }
            if effort {
                let n = num_envs * joints;
                let (mut w, mut g) = (vec![0.0; n], vec![f32::NAN; n]);
                reference.read_joint_effort(&mut w).unwrap();
                subject.read_joint_effort(&mut g).unwrap();
                assert!(close(&g, &w), "step {i} ({how}): joint efforts");
            }
        }
        assert!(
            !reference.nonfinite_envs().unwrap().is_empty() || !report,
            "step {i}: the commands zero some env, so the report is tested"
        );
    }
}

/// The command's upload buffers, used in turns: steps back to back with no
/// read between them (so nothing waits for the device), a command under
/// 1 MiB (written by the calling thread) and one past it with a ctrl past
/// it too (written and read by rayon's threads), and delays of up to 3
/// steps, so a stale or lost upload of any recent step shows in the ctrl.
#[test]
fn every_command_reaches_the_device_when_steps_run_back_to_back() {
    let Some(ctx) = gpu() else { return };
    // Commands of 1024 × 29 × 20 B = 594 KB and 9216 × 29 × 20 B = 5.3 MB
    // (its ctrl 1.07 MB).
    for num_envs in [1024, 9216] {
        let t = 29;
        let group = GroupCfg::new("legs", [".*"], IdealPdCfg::new(20.0, 0.5));
        let group = group.with_delay(DelayCfg::new(0, 3));
        let robot = crate::support::joints(t);
        let plan = Plan::new(&robot, vec![group], num_envs, PlanOptions::default()).unwrap();
        let mut reference = CpuBackend::new(plan.clone());
        let mut subject = WgpuBackend::new(&ctx, plan).unwrap();
        let mut rng = Rng(21);
        let (mut want, mut got) = (vec![0.0; num_envs * t], vec![0.0; num_envs * t]);
        // Reads after steps 6, 7 and 9 only.
        for step in 0..10 {
            let cmd = random_cmd(&mut rng, num_envs, t);
            reference.step(&cmd).unwrap();
            subject.step(&cmd).unwrap();
            if [6, 7, 9].contains(&step) {
                reference.read_ctrl(&mut want).unwrap();
                subject.read_ctrl(&mut got).unwrap();
                for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        Tolerance::GPU.accepts(g, w),
                        "{num_envs} envs, step {step}, env {}, target {}: wgpu {g:e}, cpu {w:e}",
                        i / t,
                        i % t
                    );
                }
            }
        }
    }
}

/// MuJoCo `<general>` laws of the families its kind's example (a position
/// servo) leaves out: a muscle, a dcmotor with cogging, an integrator with
/// an affine gain. The GPU reads from the parameter table only what an
/// actuator's gain, bias and dynamics use.
fn general_families() -> Vec<MjGeneralCfg> {
    let muscle = MjMuscleCfg {
        length_range: [-0.25, 0.2],
        acc0: 3.0,
        tausmooth: 0.3,
        force: 40.0,
        lmin: 0.3,
        lmax: 1.4,
        vmax: 2.0,
        fpmax: 1.1,
        fvmax: 1.5,
        ..MjMuscleCfg::default()
    };
    let prm = |values: &[f32]| {
        let mut prm = [0.0; 10];
        prm[..values.len()].copy_from_slice(values);
        prm
    };
    let integrator = MjGeneralCfg {
        dyn_type: DynType::Integrator,
        gain_type: GainType::Affine,
        gainprm: prm(&[4.0, -0.5, 0.25]),
        act_range: Some([-1.5, 1.5]),
        ..MjGeneralCfg::motor()
    };
    let dcmotor = crate::mujoco::cogging_dcmotor();
    vec![muscle.compile().unwrap(), dcmotor, integrator]
}

/// One group per registered kind, each from its [`sinew::Kind::example`],
/// on a robot whose joints carry native motors (for the wrapped kind),
/// every other group delayed; then, with `families`, a group of each of
/// [`general_families`]. A kind added to the registry is in this plan
/// without an edit here.
fn every_kind_plan(num_envs: usize, seed: u32, families: bool) -> Plan {
    let kinds = sinew::KindId::ALL;
    let extra = if families {
        general_families()
    } else {
        Vec::new()
    };
    let mut robot = Robot::from_joints((0..kinds.len() + extra.len()).map(|i| format!("j{i}")));
    robot.native_actuators = robot
        .joints
        .iter()
        .map(|j| native_motor(Transmission::Joint, j))
        .collect();
    let examples = kinds.iter().map(|kind| kind.example());
    let groups = examples
        .chain(extra.into_iter().map(Into::into))
        .enumerate()
        .map(|(i, actuator)| {
            let group = GroupCfg::new(format!("k{i}"), [format!("j{i}")], actuator);
            if i % 2 == 1 {
                group.with_delay(DelayCfg {
                    hold_prob: 0.3,
                    ..DelayCfg::new(0, 2)
                })
            } else {
                group
            }
        })
        .collect();
    let options = PlanOptions {
        seed,
        ..PlanOptions::default()
    };
    Plan::new(&robot, groups, num_envs, options).expect("every example compiles")
}

/// Every registered kind on every backend against the CPU reference, and
/// MuJoCo's `<general>` in each of its other families
/// ([`general_families`]): random commands with non-finite values, every
/// declared parameter of every group randomized per env, every state slot
/// written and read back, resets; efforts within the backend's tolerance, the non-finite report,
/// parameters and state bit for bit.
#[test]
fn parity_every_registered_kind() {
    let Some(ctx) = gpu() else { return };
    // Each kind on a joint of its own: a MuJoCo stage per element, so one
    // dispatch a step where asked.
    for (num_envs, seed, dispatches, count) in [
        (1, 3u32, Dispatches::One, 1),
        (67, 9, Dispatches::One, 1),
        (67, 9, Dispatches::Two, 2),
    ] {
        let plan = every_kind_plan(num_envs, seed, true);
        let (t, c) = (plan.num_targets(), plan.num_ctrl());
        let mut reference = CpuBackend::new(plan.clone());
        let mut subject = WgpuBackend::new(&ctx, plan.clone()).unwrap();
        assert_eq!(subject.set_dispatches(dispatches).unwrap(), count);
        let mut rng = Rng(u64::from(seed));
        let (mut want, mut got) = (vec![0.0; num_envs * c], vec![0.0; num_envs * c]);
        for step in 0..16 {
            for info in plan.groups().iter().filter(|_| step % 4 == 1) {
                let name = &info.cfg.name;
                let n = num_envs * info.targets.len();
                for param in info.cfg.actuator.params() {
                    let mut current = vec![0.0; n];
                    reference
                        .read_param(name, param.name, &mut current)
                        .unwrap();
                    let envs = rng.subset(num_envs, 0.3);
                    let values: Vec<f32> = envs
                        .iter()
                        .map(|&e| {
                            let x = current[e as usize * info.targets.len()];
                            let v = x * rng.range(0.5, 1.5);
                            // Within the domain (a fraction may not pass 1).
                            param.domain.check(v).map_or(x * 0.75, |()| v)
                        })
                        .collect();
                    for b in [&mut reference as &mut dyn Backend, &mut subject] {
                        b.set_param(
                            name,
                            param.name,
                            EnvIds::List(&envs),
                            Values::PerEnv(&values),
                        )
                        .unwrap();
                    }
                }
                for state in info.state() {
                    let envs = rng.subset(num_envs, 0.2);
                    let values: Vec<f32> = envs.iter().map(|_| rng.range(-1.0, 1.0)).collect();
                    for b in [&mut reference as &mut dyn Backend, &mut subject] {
                        b.set_state(
                            name,
                            state.name,
                            EnvIds::List(&envs),
                            Values::PerEnv(&values),
                        )
                        .unwrap();
                    }
                }
            }
            if step % 7 == 5 {
                let envs = rng.subset(num_envs, 0.3);
                reference.reset(EnvIds::List(&envs)).unwrap();
                subject.reset(EnvIds::List(&envs)).unwrap();
            }
            let mut cmd = random_cmd(&mut Rng(rng.next()), num_envs, t.max(22));
            if t < 22 {
                // `random_cmd` writes columns up to 21: keep this plan's own.
                let mut own = ActuatorCmd::zeros(num_envs, t);
                for (dst, src) in own.fields_mut().into_iter().zip(cmd.fields()) {
                    for env in 0..num_envs {
                        dst[env * t..(env + 1) * t].copy_from_slice(&src[env * 22..env * 22 + t]);
                    }
                }
                cmd = own;
            }
            // Input planes: random values, now and then a non-finite one.
            for (k, input) in plan.input_planes().iter().enumerate() {
                if (step + k) % 3 == 2 {
                    continue;
                }
                let mut values: Vec<f32> =
                    (0..num_envs * t).map(|_| rng.range(-2.0, 2.0)).collect();
                if input.name == "torque_enable" {
                    values.iter_mut().for_each(|v| *v = f32::from(*v > -1.0));
                }
                if step % 5 == 3 {
                    let at = rng.below(values.len());
                    values[at] = f32::NAN;
                }
                reference.set_input(input.name, &values).unwrap();
                subject.set_input(input.name, &values).unwrap();
            }
            reference.step(&cmd).unwrap();
            subject.step(&cmd).unwrap();
            for output in plan.output_planes() {
                reference.read_output(output.name, &mut want).unwrap();
                subject.read_output(output.name, &mut got).unwrap();
                // A testbench's q̈ = (τ_m + τ_e + τ_f)/I cancels to about 0
                // when friction holds the joint: an ulp of τ_stop (its
                // (I/dt)·q̇ term reaches ~100 N·m here) over I ≈ 0.007 kg·m²
                // is ~2e-3 rad/s². (Elsewhere q̈ reaches 1e5 at the 100 rad/s
                // clip; the relative part covers that.)
                let tol = match output.name {
                    "acceleration" => Tolerance {
                        abs: 1e-2,
                        ..Tolerance::GPU
                    },
                    _ => Tolerance::GPU,
                };
                for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        tol.accepts(g, w),
                        "step {step}, env {}, column {}: output {} wgpu {g:e}, cpu {w:e}",
                        i / c,
                        i % c,
                        output.name
                    );
                }
            }
            reference.read_ctrl(&mut want).unwrap();
            subject.read_ctrl(&mut got).unwrap();
            for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                let column = &plan.ctrl_columns()[i % c];
                assert!(
                    Tolerance::GPU.accepts(g, w),
                    "step {step}, env {}, kind {}: wgpu {g:e}, cpu {w:e}",
                    i / c,
                    plan.groups()[column.group].cfg.actuator.kind_name()
                );
            }
            assert_eq!(
                subject.nonfinite_envs().unwrap(),
                reference.nonfinite_envs().unwrap(),
                "step {step}"
            );
            // Parameters now and then; state after every step, then the
            // reference's state written into the subject, so that each
            // step compares one law evaluation (a testbench's stick-slip
            // would otherwise amplify an ulp over the steps).
            for info in plan.groups() {
                let (name, n) = (&info.cfg.name, num_envs * info.targets.len());
                let names = info.cfg.actuator.params().iter().map(|p| (p.name, true));
                let names = names.filter(|_| step % 8 == 7);
                let states = info.state().iter().map(|s| (s.name, false));
                for (what, is_param) in names.chain(states) {
                    let (mut w, mut g) = (vec![0.0; n], vec![f32::NAN; n]);
                    if is_param {
                        reference.read_param(name, what, &mut w).unwrap();
                        subject.read_param(name, what, &mut g).unwrap();
                    } else {
                        reference.read_state(name, what, &mut w).unwrap();
                        subject.read_state(name, what, &mut g).unwrap();
                    }
                    assert!(
                        g.iter()
                            .zip(&w)
                            .all(|(a, b)| Tolerance::GPU.accepts(*a, *b)),
                        "step {step}, group {name}: {what} {g:?} vs {w:?}"
                    );
                    if !is_param {
                        let values = Values::PerEnvTarget(&w);
                        subject.set_state(name, what, EnvIds::All, values).unwrap();
                    }
                }
            }
        }
    }
}

/// Every registered kind has an example that compiles on the CPU, and the
/// plan holds one column per kind.
#[test]
fn every_registered_kind_has_an_example() {
    let plan = every_kind_plan(2, 0, false);
    assert_eq!(plan.num_ctrl(), sinew::KindId::ALL.len());
    let mut kinds: Vec<_> = plan.groups().iter().map(|g| g.kind()).collect();
    kinds.dedup();
    assert_eq!(kinds, sinew::KindId::ALL);
}
