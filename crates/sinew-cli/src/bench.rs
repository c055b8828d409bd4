//! `sinew bench`: µs per step per backend × kind × size, against the memory
//! bandwidth the same run measures. The workloads are shared with the
//! criterion benches (`benches/step.rs`).

use std::hint::black_box;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::Serialize;
use sinew::{
    Activation, ActuatorCmd, Backend, BuiltinPositionCfg, DcMotorCfg, DelayCfg, Dense, Dispatches,
    Engine, EnvIds, GpuContext, GroupCfg, IdealPdCfg, LearnedMlpCfg, LstmLayer, LstmNet,
    LstmNetCfg, MjPositionCfg, Mlp, PlanOptions, Robot, Values,
};

use crate::CliError;

/// The workloads, by name.
pub const KINDS: [&str; 11] = [
    "pd",
    "dc",
    "delayed_dc",
    "delay_dc",
    "passthrough",
    "mujoco",
    "learned_mlp",
    "learned_lstm",
    "servo",
    "muscle_pair",
    "mj_dcmotor",
];

/// A network of the walk-these-ways Go1 actuator net's shape, 6 → 32 → 32 →
/// 1 with softsign, and fixed pseudo-random weights (for timing only).
pub fn go1_shaped_mlp() -> Mlp {
    let mut state = 3u64;
    let mut layer = |name: &str, outputs: usize, inputs: usize, activation| {
        let scale = 1.0 / (inputs as f32).sqrt();
        let mut draw = |n: usize| -> Vec<f32> {
            (0..n)
                .map(|_| (2.0 * lcg(&mut state) - 1.0) * scale)
                .collect()
        };
        let weight = draw(outputs * inputs);
        let bias = draw(outputs);
        Dense::new(name, outputs, inputs, weight, bias, activation)
    };
    let layers = vec![
        layer("0", 32, 6, Activation::Softsign),
        layer("2", 32, 32, Activation::Softsign),
        layer("4", 1, 32, Activation::Identity),
    ];
    Mlp::new("go1-shaped", layers).expect("a valid network")
}

/// A network of Isaac Lab's `ActuatorNetLSTM` shape (the ANYdrive net):
/// 2 inputs, 2 LSTM layers of 32 hidden units, a linear head, with fixed
/// pseudo-random weights (for timing only).
pub fn anydrive_shaped_lstm() -> LstmNet {
    let mut state = 5u64;
    let hidden = 32;
    let mut draw = |n: usize| -> Vec<f32> {
        let scale = 1.0 / (hidden as f32).sqrt();
        (0..n)
            .map(|_| (2.0 * lcg(&mut state) - 1.0) * scale)
            .collect()
    };
    let layers = (0..2)
        .map(|l| {
            let inputs = if l == 0 { 2 } else { hidden };
            LstmLayer {
                name: ("lstm.".into(), format!("_l{l}")),
                inputs,
                hidden,
                weight_ih: draw(4 * hidden * inputs),
                weight_hh: draw(4 * hidden * hidden),
                bias_ih: draw(4 * hidden),
                bias_hh: draw(4 * hidden),
            }
        })
        .collect();
    let head = Dense::new(
        "linear",
        1,
        hidden,
        draw(hidden),
        draw(1),
        Activation::Identity,
    );
    LstmNet::new("anydrive-shaped", layers, vec![head]).expect("a valid network")
}

fn dc(kp: f32) -> DcMotorCfg {
    DcMotorCfg {
        stiffness: kp,
        damping: 1.0,
        effort_limit: 30.0,
        saturation_effort: 40.0,
        velocity_limit: 20.0,
    }
}

/// The groups of one workload over joints `j0..`: one group over all targets,
/// or for `delayed_dc` 3 targets delayed 0–4 steps (resampled every step, as
/// mjlab) in a second DC group beside the undelayed one. `delay_dc` delays
/// every target 0–4 steps, as the hand-written C peer's workload of that name
/// (`../shared/peers/`) does. `mujoco` is MuJoCo's
/// `<position kp=40 kv=1 timeconst=0.02 forcerange=±30>` on every joint,
/// computed by Sinew: an activation per (env, joint) and joint efforts.
/// `learned_mlp` is mjlab's Go1 learned actuator: [`go1_shaped_mlp`] over a
/// history of 3, then the DC clip. `learned_lstm` is Isaac Lab's
/// `ActuatorNetLSTM` ([`anydrive_shaped_lstm`]), then the DC clip. `servo` is BAM's XL-330 voltage law with
/// its shipped M6 friction (`xl330/m6`) on every joint, its torque enable and
/// external torque input planes at their defaults, its friction and command
/// outputs written. `muscle_pair` is MIMo's muscle model, joint `t` with the
/// parameters of MIMo's actuator `t mod 44` (the `mimo` preset; `--targets
/// 44` is MIMo's body), activation targets at their default 0.
/// `mj_dcmotor` is MuJoCo 4's `<dcmotor>` with every state on (controller,
/// slew, integral, inductance, thermal model, LuGre, cogging, saturation) on
/// every joint.
pub fn workload_groups(kind: &str, num_targets: usize) -> Option<Vec<GroupCfg>> {
    let all = [".*"];
    Some(match kind {
        "pd" => vec![GroupCfg::new(
            "g",
            all,
            IdealPdCfg::new(40.0, 1.0).with_effort_limit(30.0),
        )],
        "dc" => vec![GroupCfg::new("g", all, dc(40.0))],
        "delayed_dc" => {
            let split = num_targets.saturating_sub(3);
            let names = |r: std::ops::Range<usize>| r.map(|t| format!("j{t}")).collect::<Vec<_>>();
            let mut groups = vec![GroupCfg::new("d", names(split..num_targets), dc(40.0))
                .with_delay(DelayCfg::new(0, 4))];
            if split > 0 {
                groups.insert(0, GroupCfg::new("g", names(0..split), dc(40.0)));
            }
            groups
        }
        "delay_dc" => vec![GroupCfg::new("g", all, dc(40.0)).with_delay(DelayCfg::new(0, 4))],
        "mujoco" => vec![GroupCfg::new(
            "g",
            all,
            MjPositionCfg {
                kp: 40.0,
                kv: Some(1.0),
                timeconst: 0.02,
                force_range: Some([-30.0, 30.0]),
                ..MjPositionCfg::default()
            }
            .position()
            .expect("valid servo settings"),
        )],
        "learned_mlp" => vec![GroupCfg::new(
            "g",
            all,
            LearnedMlpCfg::new(go1_shaped_mlp(), 23.7, 23.7, 30.0).with_scales(-1.0, 1.0, 1.0),
        )],
        "learned_lstm" => vec![GroupCfg::new(
            "g",
            all,
            LstmNetCfg::new(anydrive_shaped_lstm(), 80.0, 120.0, 7.5),
        )],
        "servo" => {
            let fit = sinew::bam::bam_fit("xl330/m6").expect("a shipped fit");
            let servo = fit
                .servo("g", sinew::bam::BamSettings::default(), 0.005)
                .expect("the shipped fit is complete");
            vec![GroupCfg::new("g", all, servo.actuator())]
        }
        "muscle_pair" => {
            let mimo = crate::presets::preset("mimo")
                .expect("a shipped preset")
                .expect("the shipped preset parses")
                .groups;
            (0..num_targets)
                .map(|t| {
                    let cfg = mimo[t % mimo.len()].actuator.clone();
                    GroupCfg::new(format!("g{t}"), [format!("j{t}")], cfg)
                })
                .collect()
        }
        "mj_dcmotor" => vec![GroupCfg::new(
            "g",
            all,
            <sinew::MjDcMotorCfg as sinew::Kind>::example(),
        )],
        "passthrough" => vec![GroupCfg::new(
            "g",
            all,
            BuiltinPositionCfg {
                stiffness: 40.0,
                damping: 1.0,
                effort_limit: None,
            },
        )],
        _ => return None,
    })
}

/// Bytes a step must move per (env, target): reads and writes of f32, no
/// write-allocate (the triad's accounting). PD reads 5 command fields and 3
/// parameters and writes ctrl; DC reads 5 parameters; delayed DC adds the
/// push and read of 3 fields on 3 targets; pass-through reads all five fields
/// (the non-finite check) and writes ctrl.
pub fn bytes_per_element(kind: &str, num_targets: usize) -> f64 {
    match kind {
        "pd" => 36.0,
        "dc" => 44.0,
        "delayed_dc" => 44.0 + 3.0 * 24.0 / num_targets as f64,
        // Every target pushes and reads its three delayed fields.
        "delay_dc" => 44.0 + 24.0,
        // The five command fields (all checked), the activation and the
        // 12 parameters a filtered position servo reads from the table
        // (gain, three bias terms, the time constant, the gear, six range
        // bounds) in; force, act_dot, activation and joint effort out.
        "mujoco" => 88.0,
        // The five command fields and three limits in; the two newest
        // history slots written, six taps read; ctrl out.
        "learned_mlp" => 68.0,
        // The five command fields and three limits in; both layers' hidden
        // and cell states (128 values) read and written; ctrl out.
        "learned_lstm" => 44.0 + 2.0 * 128.0 * 4.0,
        // The five command fields, two input planes and 20 parameters in;
        // ctrl and three outputs (friction loss, damping, command) out.
        "servo" => 124.0,
        // The five command fields, two input planes, eight parameters and
        // two activations in; ctrl, the two activations and five output
        // planes out.
        "muscle_pair" => 100.0,
        // The five command fields, the voltage plane, 29 parameters and five
        // states in; ctrl, five states and six output planes out.
        "mj_dcmotor" => 208.0,
        _ => 24.0,
    }
}

fn lcg(state: &mut u64) -> f32 {
    *state = state
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    (*state >> 40) as f32 / (1u64 << 24) as f32
}

/// The robot, groups and a command of one workload; `randomize` then gives
/// every (env, target) its own gains and limits.
pub fn workload(
    kind: &str,
    num_envs: usize,
    num_targets: usize,
) -> Option<(Robot, Vec<GroupCfg>, ActuatorCmd)> {
    let groups = workload_groups(kind, num_targets)?;
    let robot = Robot::from_joints((0..num_targets).map(|t| format!("j{t}")));
    let mut rng = 1u64;
    let mut cmd = ActuatorCmd::zeros(num_envs, num_targets);
    for field in cmd.fields_mut() {
        field
            .iter_mut()
            .for_each(|x| *x = 4.0 * lcg(&mut rng) - 2.0);
    }
    Some((robot, groups, cmd))
}

/// Per-(env, target) stiffness, damping and effort limit in [20, 40).
pub fn randomize(backend: &mut dyn Backend) {
    let mut rng = 7u64;
    let num_envs = backend.plan().num_envs();
    let groups: Vec<(String, usize)> = backend
        .plan()
        .groups()
        .iter()
        .map(|g| (g.cfg.name.clone(), g.targets.len()))
        .collect();
    for (group, targets) in groups {
        for param in ["stiffness", "damping", "effort_limit"] {
            // Pass-through groups have no such parameters.
            if backend.plan().group_param(&group, param).is_err() {
                continue;
            }
            let values: Vec<f32> = (0..num_envs * targets)
                .map(|_| 20.0 + 20.0 * lcg(&mut rng))
                .collect();
            backend
                .set_param(&group, param, EnvIds::All, Values::PerEnvTarget(&values))
                .expect("values in [20, 40) suit every parameter");
        }
    }
}

/// One measured cell.
#[derive(Debug, Clone, Serialize)]
pub struct BenchResult {
    /// `cpu` or `wgpu`.
    pub backend: String,
    /// The workload (a scenario's name for `--scenario`).
    pub kind: String,
    /// `hot` (the same command every step, caches warm), `after_work` (the
    /// caller's own work between steps: a scenario's next command is
    /// generated, untimed, before each timed step on the step's threads
    /// through `Engine::par_rows_mut`, as `sinew run` does),
    /// `after_serial` (the same work on the calling thread alone, as numpy
    /// or a simulator on one thread writes the command) or `after_idle` (1
    /// ms asleep between steps, as a simulator's step on threads of its own
    /// would leave Sinew's: the pool's workers park).
    pub mode: String,
    /// Envs.
    pub num_envs: usize,
    /// Targets per env.
    pub num_targets: usize,
    /// µs per step (GPU: upload, submit and wait): the median of 7
    /// batches' mean step time, each batch ≥ 20 ms of steps.
    pub us_per_step: f64,
    /// The median of the same steps' single times, in µs: below
    /// `us_per_step` when some steps take far longer than most.
    pub p50_us: f64,
    /// Their 90th percentile, in µs: the tail the mean folds in.
    pub p90_us: f64,
    /// GPU only, `hot` only: the median of the GPU's own time per step in
    /// µs, from timestamp queries around the step's compute pass (no
    /// upload, submission or wait); `None` where the device has no
    /// timestamp queries.
    pub gpu_us_per_step: Option<f64>,
    /// Where that time goes: the medians of each of the step's dispatches
    /// timed in a pass of its own ([`sinew::WgpuBackend::gpu_stage_times`]),
    /// with the same `None`s.
    pub gpu_stages_us: Option<GpuStages>,
    /// (env, target) elements per second.
    pub elements_per_second: f64,
    /// GB/s the step moves by [`bytes_per_element`].
    pub gbs: f64,
    /// That as a share of the backend's measured bandwidth, in %.
    pub percent_of_bandwidth: f64,
}

impl BenchResult {
    /// A cell: `(backend, kind, mode)`, `(num_envs, num_targets)`, its step
    /// times, the bytes a step moves per element and the backend's
    /// bandwidth (GB/s).
    fn new(
        (backend, kind, mode): (&str, &str, &str),
        (num_envs, num_targets): (usize, usize),
        times: StepTimes,
        bytes_per_element: f64,
        bandwidth: f64,
    ) -> BenchResult {
        let us = times.mean;
        let elements = (num_envs * num_targets) as f64;
        let gbs = elements * bytes_per_element / (us * 1e3);
        BenchResult {
            backend: backend.to_owned(),
            kind: kind.to_owned(),
            mode: mode.to_owned(),
            num_envs,
            num_targets,
            us_per_step: us,
            p50_us: times.p50,
            p90_us: times.p90,
            gpu_us_per_step: None,
            gpu_stages_us: None,
            elements_per_second: elements / us * 1e6,
            gbs,
            percent_of_bandwidth: 100.0 * gbs / bandwidth,
        }
    }
}

/// The median GPU time of each of a step's dispatches, in µs
/// ([`sinew::StageTimes`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GpuStages {
    /// The law stage (one thread per element; with one dispatch per step,
    /// the whole step).
    pub law: f64,
    /// The output stage (one thread per env); `None` with one dispatch per
    /// step ([`sinew::Dispatches`]).
    pub output: Option<f64>,
}

/// A whole `sinew bench` run.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// Each backend's measured bandwidth: CPU triad (rayon) or GPU buffer copy, GB/s.
    pub bandwidth_gbs: Vec<(String, f64)>,
    /// Each backend in words.
    pub devices: Vec<(String, String)>,
    /// The cells.
    pub results: Vec<BenchResult>,
    /// Cells a device could not hold, each with why (e.g. a software
    /// adapter's 128 MiB binding limit).
    pub skipped: Vec<String>,
}

/// Elements of each triad array: 3 × 128 MiB, far past the caches.
pub const TRIAD_LEN: usize = 32 << 20;

/// One STREAM triad pass, `a = b + 3·c`, on all rayon threads.
pub fn triad_pass(a: &mut [f32], b: &[f32], c: &[f32]) {
    a.par_chunks_mut(1 << 16)
        .zip(b.par_chunks(1 << 16))
        .zip(c.par_chunks(1 << 16))
        .for_each(|((a, b), c)| {
            for i in 0..a.len() {
                a[i] = b[i] + 3.0 * c[i];
            }
        });
}

/// The best of 7 [`triad_pass`]es over [`TRIAD_LEN`] elements, in GB/s
/// (12 bytes per element), as STREAM reports it.
pub fn cpu_triad_gbs() -> f64 {
    let n = TRIAD_LEN;
    let (mut a, b, c) = (vec![0.5f32; n], vec![1.0f32; n], vec![2.0f32; n]);
    best_of(7, || {
        let start = Instant::now();
        triad_pass(&mut a, &b, &c);
        black_box(&a);
        12.0 * n as f64 / start.elapsed().as_secs_f64() / 1e9
    })
}

/// The device's copy bandwidth, GB/s counting bytes read and written: the
/// faster of `copy_buffer_to_buffer` and a copy kernel (16-byte loads and
/// stores). Each copies 256 MiB (less where the adapter binds less), 8
/// times to a submission so that the submission's fixed cost is spread
/// thin; the best of 7, after half a second of copies that brings the
/// GPU's clocks up. (On an H200 the copy command moved a fifth of what the
/// kernel did; after one warm-up submission, a run that opened with the
/// CPU's half measured 1.14 TB/s where a warm one gave 2.77.)
pub fn gpu_copy_gbs(ctx: &GpuContext) -> f64 {
    use wgpu::BufferUsages as U;
    const COPIES: u64 = 8;
    let device = ctx.device();
    let limits = device.limits();
    let most = limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size);
    // A whole number of workgroups' 4 KiB.
    let bytes = (256u64 << 20).min(most) & !4095;
    let buffer = |usage| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("bandwidth"),
            size: bytes,
            usage,
            mapped_at_creation: false,
        })
    };
    let (src, dst) = (
        buffer(U::COPY_SRC | U::STORAGE),
        buffer(U::COPY_DST | U::STORAGE),
    );
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("bandwidth"),
        source: wgpu::ShaderSource::Wgsl(COPY_KERNEL.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("bandwidth"),
        layout: None,
        module: &module,
        entry_point: Some("copy"),
        compilation_options: Default::default(),
        cache: None,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("bandwidth"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: src.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: dst.as_entire_binding(),
            },
        ],
    });
    // 16 bytes per thread, 256 threads per workgroup, x then y.
    let groups = (bytes / 16 / 256) as u32;
    let x = groups.min(limits.max_compute_workgroups_per_dimension);
    let y = groups.div_ceil(x);
    let timed = |kernel: bool| {
        let start = Instant::now();
        let mut encoder = device.create_command_encoder(&Default::default());
        for _ in 0..COPIES {
            if kernel {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_pipeline(&pipeline);
                pass.set_bind_group(0, &group, &[]);
                pass.dispatch_workgroups(x, y, 1);
            } else {
                encoder.copy_buffer_to_buffer(&src, 0, &dst, 0, bytes);
            }
        }
        ctx.queue().submit([encoder.finish()]);
        wait(ctx);
        (2 * COPIES * bytes) as f64 / start.elapsed().as_secs_f64() / 1e9
    };
    let start = Instant::now();
    while start.elapsed() < GPU_WARM_UP {
        timed(true);
    }
    let command = best_of(7, || timed(false));
    let kernel = best_of(7, || timed(true));
    command.max(kernel)
}

/// The copy kernel of [`gpu_copy_gbs`]: one 16-byte element per thread.
const COPY_KERNEL: &str = "
@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
@compute @workgroup_size(256)
fn copy(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    let i = gid.y * n.x * 256u + gid.x;
    if i < arrayLength(&src) {
        dst[i] = src[i];
    }
}
";

fn wait(ctx: &GpuContext) {
    let _ = ctx.device().poll(wgpu::PollType::wait_indefinitely());
}

fn best_of(n: usize, mut f: impl FnMut() -> f64) -> f64 {
    (0..n).map(|_| f()).fold(0.0, f64::max)
}

/// A cell's step times, in µs ([`BenchResult`]).
#[derive(Debug, Clone, Copy)]
struct StepTimes {
    /// The median of the batches' mean step time.
    mean: f64,
    /// The median single step.
    p50: f64,
    /// The 90th percentile single step.
    p90: f64,
}

/// Step times: batches of steps long enough to time (≥ 20 ms), 7 of them,
/// each step also timed on its own. `between(k, cmd)`, untimed, runs
/// before step `k` (the caller's own work; it may rewrite the command).
fn time_steps(
    engine: &mut Engine,
    cmd: &mut ActuatorCmd,
    mut between: impl FnMut(usize, &mut ActuatorCmd, &Engine) -> Result<(), CliError>,
) -> Result<StepTimes, CliError> {
    let mut k = 0;
    let mut step = |engine: &mut Engine, cmd: &mut ActuatorCmd| -> Result<Duration, CliError> {
        between(k, cmd, engine)?;
        k += 1;
        let start = Instant::now();
        engine.step(&*cmd)?;
        // The non-finite report waits for the step on the GPU.
        engine.nonfinite_envs()?;
        Ok(start.elapsed())
    };
    for _ in 0..5 {
        step(engine, cmd)?;
    }
    let start_of_batch = Instant::now();
    let one = step(engine, cmd)?.max(Duration::from_nanos(100));
    // Batches of ≥ 20 ms of stepping, within ~1 s of wall time each.
    let wall = start_of_batch.elapsed().max(one);
    let batch = (Duration::from_millis(20).as_secs_f64() / one.as_secs_f64()).ceil() as usize;
    let batch = batch.clamp(
        1,
        (1.0 / wall.as_secs_f64()).ceil().clamp(1.0, 10_000.0) as usize,
    );
    let mut means = Vec::with_capacity(7);
    let mut singles = Vec::with_capacity(7 * batch);
    for _ in 0..7 {
        let mut total = Duration::ZERO;
        for _ in 0..batch {
            let one = step(engine, cmd)?;
            total += one;
            singles.push(one.as_secs_f64() * 1e6);
        }
        means.push(total.as_secs_f64() / batch as f64 * 1e6);
    }
    means.sort_by(f64::total_cmp);
    singles.sort_by(f64::total_cmp);
    let at = |q: f64| singles[((singles.len() - 1) as f64 * q).round() as usize];
    Ok(StepTimes {
        mean: means[3],
        p50: at(0.5),
        p90: at(0.9),
    })
}

/// How long the GPU works back to back before a timed measurement. A GPU
/// between short, synchronized steps idles most of the time and lowers its
/// clocks; a physics engine beside it keeps them up. Half a second brings
/// them up (on an H200, 200 ms did not always).
const GPU_WARM_UP: Duration = Duration::from_millis(500);

/// The median GPU time per step of a GPU engine in µs (timestamp queries,
/// [`sinew::WgpuBackend::gpu_step_times`]), over about 20 ms of steps by
/// `us`, the step's wall time, and as many steps' stages
/// ([`sinew::WgpuBackend::gpu_stage_times`]); `None` on the CPU or without
/// timestamps.
fn gpu_time(
    engine: &mut Engine,
    cmd: &ActuatorCmd,
    us: f64,
) -> Result<Option<(f64, GpuStages)>, CliError> {
    let Engine::Gpu(gpu) = engine else {
        return Ok(None);
    };
    let start = Instant::now();
    while start.elapsed() < GPU_WARM_UP {
        if gpu.gpu_step_times(cmd, 256)?.is_none() {
            return Ok(None);
        }
    }
    let steps = (20_000.0 / us.max(1.0)).ceil().clamp(256.0, 2_000.0) as usize;
    let (Some(times), Some(stages)) = (
        gpu.gpu_step_times(cmd, steps)?,
        gpu.gpu_stage_times(cmd, steps)?,
    ) else {
        return Ok(None);
    };
    let median = |mut times: Vec<f64>| {
        times.sort_by(f64::total_cmp);
        times[times.len() / 2]
    };
    let stages = GpuStages {
        law: median(stages.iter().map(|t| t.law_us).collect()),
        output: (stages.iter().map(|t| t.output_us))
            .collect::<Option<Vec<f64>>>()
            .map(median),
    };
    Ok(Some((median(times), stages)))
}

/// A GPU engine's [`Dispatches`] (a CPU engine has none).
fn set_dispatches(engine: &mut Engine, dispatches: Dispatches) -> Result<(), CliError> {
    if let Engine::Gpu(gpu) = engine {
        gpu.set_dispatches(dispatches)?;
    }
    Ok(())
}

/// Runs the suite. `backends` are `cpu` and/or `wgpu`; `dispatches`, how
/// the GPU's steps dispatch their kernels.
pub fn bench(
    backends: &[&str],
    kinds: &[String],
    envs: &[usize],
    num_targets: usize,
    dispatches: Dispatches,
    progress: bool,
) -> Result<BenchReport, CliError> {
    for kind in kinds {
        if workload_groups(kind, num_targets).is_none() {
            return Err(CliError::Usage(format!(
                "unknown kind `{kind}`; the kinds are {}",
                KINDS.join(", ")
            )));
        }
    }
    // The joint names, their group lists and the plan's columns come before
    // any table (which `Plan::new` checks): about 256 bytes a target.
    sinew::memory::check_bytes(
        "bench",
        "--targets",
        num_targets,
        (num_targets as u64).checked_mul(256),
    )?;
    let mut report = BenchReport {
        bandwidth_gbs: Vec::new(),
        devices: Vec::new(),
        results: Vec::new(),
        skipped: Vec::new(),
    };
    let cells = backends.len() * kinds.len() * envs.len();
    let bar = if progress {
        let bar = ProgressBar::new(cells as u64);
        bar.set_style(
            ProgressStyle::with_template("{msg:32} [{bar:30}] {pos}/{len}")
                .expect("a valid template")
                .progress_chars("=> "),
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    for &backend in backends {
        bar.set_message(format!("{backend}: bandwidth"));
        let bandwidth = measure_bandwidth(backend, &mut report)?;
        for kind in kinds {
            for &num_envs in envs {
                bar.set_message(format!("{backend} {kind} {num_envs}×{num_targets}"));
                let (robot, groups, mut cmd) =
                    workload(kind, num_envs, num_targets).expect("kinds checked above");
                let options = PlanOptions::default();
                let mut engine = match backend {
                    "cpu" => Engine::cpu(&robot, groups, num_envs, options)?,
                    _ => match Engine::gpu(&robot, groups, num_envs, options) {
                        Ok(engine) => engine,
                        Err(e) if e.kind() == sinew::ErrorKind::Device => {
                            report
                                .skipped
                                .push(format!("{backend} {kind} {num_envs} × {num_targets}: {e}"));
                            bar.inc(1);
                            continue;
                        }
                        Err(e) => return Err(e.into()),
                    },
                };
                randomize(&mut engine);
                set_dispatches(&mut engine, dispatches)?;
                let times = time_steps(&mut engine, &mut cmd, |_, _, _| Ok(()))?;
                let mut result = BenchResult::new(
                    (backend, kind, "hot"),
                    (num_envs, num_targets),
                    times,
                    bytes_per_element(kind, num_targets),
                    bandwidth,
                );
                if let Some((us, stages)) = gpu_time(&mut engine, &cmd, times.mean)? {
                    result.gpu_us_per_step = Some(us);
                    result.gpu_stages_us = Some(stages);
                }
                report.results.push(result);
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    Ok(report)
}

/// The bandwidth of `backend` (`cpu`: the rayon triad; `wgpu`: a device
/// copy), recorded in `report` with the device's description.
fn measure_bandwidth(backend: &str, report: &mut BenchReport) -> Result<f64, CliError> {
    let bandwidth = match backend {
        "cpu" => {
            report.devices.push((
                "cpu".into(),
                format!(
                    "rayon, {} threads, {} loops",
                    rayon::current_num_threads(),
                    sinew::simd::form().name()
                ),
            ));
            cpu_triad_gbs()
        }
        _ => {
            let ctx = GpuContext::shared()?;
            report
                .devices
                .push(("wgpu".into(), ctx.description().to_owned()));
            gpu_copy_gbs(&ctx)
        }
    };
    report.bandwidth_gbs.push((backend.to_owned(), bandwidth));
    Ok(bandwidth)
}

/// `sinew bench --scenario`: a scenario (its robot, groups, inputs and
/// command source) at each of `envs`, on each backend, timed four ways:
/// `hot`, its first command stepped again and again; `after_work`, the
/// scenario's next command generated (untimed) before each timed step, the
/// caller's work that `sinew run` also does between steps (on the step's
/// threads); `after_serial`, the same on the calling thread alone; `after_idle`,
/// 1 ms asleep before each step. GB/s counts a
/// lower bound of the bytes a step moves: the five command fields, ctrl,
/// and every parameter slot of the plan.
pub fn bench_scenario(
    scenario: &crate::Scenario,
    backends: &[&str],
    envs: &[usize],
    dispatches: Dispatches,
    progress: bool,
) -> Result<BenchReport, CliError> {
    let mut report = BenchReport {
        bandwidth_gbs: Vec::new(),
        devices: Vec::new(),
        results: Vec::new(),
        skipped: Vec::new(),
    };
    let bar = if progress {
        ProgressBar::new((backends.len() * envs.len() * 4) as u64)
    } else {
        ProgressBar::hidden()
    };
    for &backend in backends {
        let bandwidth = measure_bandwidth(backend, &mut report)?;
        let choice = match backend {
            "cpu" => crate::run::BackendChoice::Cpu,
            _ => crate::run::BackendChoice::Wgpu,
        };
        for &num_envs in envs {
            // The scenario's own run of commands, looped over the batches of
            // `time_steps` (an `.npy` source holds that many steps).
            let steps = scenario.steps;
            let command = crate::command::CommandGen::for_scenario(scenario, num_envs, steps)?;
            let mut engine = crate::run::engine(scenario, num_envs, choice)?;
            set_dispatches(&mut engine, dispatches)?;
            let num_targets = engine.plan().num_targets();
            let bytes = 4.0 * (5 + 1 + engine.plan().num_param_slots()) as f64;
            for mode in ["hot", "after_work", "after_serial", "after_idle"] {
                let mut cmd = ActuatorCmd::zeros(num_envs, num_targets);
                command.fill(0, &mut cmd, &engine)?;
                let times = match mode {
                    "hot" => time_steps(&mut engine, &mut cmd, |_, _, _| Ok(()))?,
                    "after_work" => time_steps(&mut engine, &mut cmd, |k, cmd, engine| {
                        Ok(command.fill(k % steps, cmd, engine)?)
                    })?,
                    "after_serial" => time_steps(&mut engine, &mut cmd, |k, cmd, _| {
                        command.fill_rows(k % steps, 0..num_envs, cmd.fields_mut());
                        Ok(())
                    })?,
                    _ => time_steps(&mut engine, &mut cmd, |_, _, _| {
                        std::thread::sleep(Duration::from_millis(1));
                        Ok(())
                    })?,
                };
                let mut result = BenchResult::new(
                    (backend, &scenario.name, mode),
                    (num_envs, engine.plan().num_ctrl()),
                    times,
                    bytes,
                    bandwidth,
                );
                if mode == "hot" {
                    if let Some((us, stages)) = gpu_time(&mut engine, &cmd, times.mean)? {
                        result.gpu_us_per_step = Some(us);
                        result.gpu_stages_us = Some(stages);
                    }
                }
                report.results.push(result);
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    Ok(report)
}

impl BenchReport {
    /// The report as Markdown tables, one per backend.
    pub fn table(&self) -> String {
        let mut out = String::new();
        for (backend, bandwidth) in &self.bandwidth_gbs {
            let device = self
                .devices
                .iter()
                .find(|(b, _)| b == backend)
                .map_or("", |(_, d)| d.as_str());
            let what = if backend == "cpu" {
                "triad"
            } else {
                "device copy"
            };
            let results = || self.results.iter().filter(|r| &r.backend == backend);
            // The GPU's own time where timestamp queries gave one.
            let timed = results().any(|r| r.gpu_us_per_step.is_some());
            let (gpu_head, gpu_rule) = if timed {
                (" GPU µs/step (law / output, – one dispatch) |", "---:|")
            } else {
                ("", "")
            };
            out.push_str(&format!(
                "\n{backend} ({device}): {what} {bandwidth:.1} GB/s\n\
                 | kind | mode | num_envs × targets | µs/step | p50 µs | p90 µs |{gpu_head} Melem/s | GB/s moved | % of {what} |\n\
                 |---|---|---|---:|---:|---:|{gpu_rule}---:|---:|---:|\n"
            ));
            for r in results() {
                let gpu = match (timed, r.gpu_us_per_step, r.gpu_stages_us) {
                    (false, ..) => String::new(),
                    (true, Some(us), Some(stages)) => {
                        let law = stages.law;
                        let output = stages.output.map_or("–".into(), |o| format!("{o:.1}"));
                        format!(" {us:.1} ({law:.1} / {output}) |")
                    }
                    (true, ..) => " – |".to_owned(),
                };
                out.push_str(&format!(
                    "| {} | {} | {} × {} | {:.1} | {:.1} | {:.1} |{gpu} {:.0} | {:.1} | {:.0}% |\n",
                    r.kind,
                    r.mode,
                    r.num_envs,
                    r.num_targets,
                    r.us_per_step,
                    r.p50_us,
                    r.p90_us,
                    r.elements_per_second / 1e6,
                    r.gbs,
                    r.percent_of_bandwidth
                ));
            }
        }
        for skip in &self.skipped {
            out.push_str(&format!("\nskipped: {skip}"));
        }
        out
    }
}
