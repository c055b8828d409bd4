//! Long-run CPU ≡ GPU agreement (ignored by default; minutes to hours):
//!
//! ```text
//! SINEW_SOAK_STEPS=1000000 cargo test --release --test integration soak -- --ignored --nocapture
//! ```
//!
//! A mixed plan with every family of kinds (PD, delayed DC with random
//! lags, RemotizedPD, MuJoCo filter and integrator activations, a builtin
//! position servo computing MuJoCo's force, a delayed learned MLP, an LSTM),
//! its parameters randomized per env from the seed, is stepped on the CPU
//! and the GPU in lockstep with resets, setters, lag writes, activation
//! writes and NaN injections on fixed periods. Every step: ctrl within the
//! parity tolerance, the same non-finite envs, the same lags. Every 10 000
//! steps: the largest deviation of the window (it must not grow) and the
//! process's resident memory (it must stay flat).

use std::sync::Arc;

use sinew::{
    Activation, ActuatorCmd, Backend, BuiltinPositionCfg, CpuBackend, DcMotorCfg, DelayCfg, Dense,
    DynType, EnvIds, GroupCfg, IdealPdCfg, Lags, LearnedMlpCfg, LstmLayer, LstmNet, LstmNetCfg,
    MjGeneralCfg, Mlp, Plan, PlanOptions, RemotizedPdCfg, Values, WgpuBackend,
};

use crate::support::{gpu, joints, Rng, Tolerance};

fn mixed_plan(num_envs: usize, rng: &mut Rng) -> Plan {
    let mlp = Mlp::new(
        "soak mlp",
        vec![
            Dense::new(
                "0",
                4,
                4,
                (0..16).map(|_| rng.range(-0.5, 0.5)).collect(),
                (0..4).map(|_| rng.range(-0.1, 0.1)).collect(),
                Activation::Tanh,
            ),
            Dense::new(
                "1",
                1,
                4,
                (0..4).map(|_| rng.range(-2.0, 2.0)).collect(),
                vec![0.0],
                Activation::Identity,
            ),
        ],
    )
    .unwrap();
    let lstm = LstmNet::new(
        "soak lstm",
        vec![LstmLayer {
            name: ("lstm.".into(), "_l0".into()),
            inputs: 2,
            hidden: 4,
            weight_ih: (0..32).map(|_| rng.range(-0.5, 0.5)).collect(),
            weight_hh: (0..64).map(|_| rng.range(-0.5, 0.5)).collect(),
            bias_ih: (0..16).map(|_| rng.range(-0.1, 0.1)).collect(),
            bias_hh: (0..16).map(|_| rng.range(-0.1, 0.1)).collect(),
        }],
        vec![Dense::new(
            "head",
            1,
            4,
            (0..4).map(|_| rng.range(-2.0, 2.0)).collect(),
            vec![0.0],
            Activation::Identity,
        )],
    )
    .unwrap();
    let mut filter = MjGeneralCfg::motor().with_act_range([-1.0, 1.0]);
    filter.dyn_type = DynType::Filter;
    filter.dynprm[0] = 0.05;
    let mut integrator = MjGeneralCfg::motor().with_act_range([-2.0, 2.0]);
    integrator.dyn_type = DynType::Integrator;
    let lags = DelayCfg {
        hold_prob: 0.3,
        update_period: 2,
        ..DelayCfg::new(0, 3)
    };
    let groups = vec![
        GroupCfg::new(
            "pd",
            ["j0", "j1"],
            IdealPdCfg::new(20.0, 0.5).with_effort_limit(30.0),
        ),
        GroupCfg::new(
            "dc",
            ["j2", "j3"],
            DcMotorCfg {
                stiffness: 25.0,
                damping: 0.8,
                effort_limit: 20.0,
                saturation_effort: 25.0,
                velocity_limit: 15.0,
            },
        )
        .with_delay(lags),
        GroupCfg::new(
            "knee",
            ["j4"],
            RemotizedPdCfg::new(
                30.0,
                1.0,
                [[-1.0, 1.0, 10.0], [0.0, 1.0, 25.0], [1.0, 1.0, 12.0]],
            ),
        ),
        GroupCfg::new("filter", ["j5"], filter),
        GroupCfg::new("integrator", ["j6"], integrator),
        GroupCfg::new(
            "servo",
            ["j7"],
            BuiltinPositionCfg {
                stiffness: 15.0,
                damping: 0.3,
                effort_limit: Some(12.0),
            },
        )
        .with_computed_force()
        .with_delay(DelayCfg::new(1, 1)),
        GroupCfg::new(
            "mlp",
            ["j8"],
            LearnedMlpCfg::new(Arc::new(mlp), 8.0, 12.0, 6.0).with_history_length(2),
        )
        .with_delay(DelayCfg::new(0, 2)),
        GroupCfg::new(
            "lstm",
            ["j9"],
            LstmNetCfg::new(Arc::new(lstm), 8.0, 12.0, 6.0),
        ),
    ];
    let options = PlanOptions {
        seed: rng.next() as u32,
        ..PlanOptions::default()
    };
    Plan::new(&joints(10), groups, num_envs, options).unwrap()
}

/// Resident memory of this process (bytes), where `/proc` says.
fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[test]
#[ignore = "minutes to hours: run it by name (see the module docs)"]
fn soak_cpu_and_gpu_agree_in_lockstep() {
    let Some(ctx) = gpu() else { return };
    let steps: usize = std::env::var("SINEW_SOAK_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let num_envs = 64;
    let mut rng = Rng(0x5eed);
    let plan = mixed_plan(num_envs, &mut rng);
    let (t, c) = (plan.num_targets(), plan.num_ctrl());
    let delayed: Vec<String> = plan
        .buffers()
        .iter()
        .map(|b| plan.groups()[b.groups[0]].cfg.name.clone())
        .collect();
    let mut cpu_backend = CpuBackend::new(plan.clone());
    let mut wgpu_backend = WgpuBackend::new(&ctx, plan).unwrap();
    let cpu: &mut dyn Backend = &mut cpu_backend;
    let wgpu: &mut dyn Backend = &mut wgpu_backend;
    // Per-env parameters, the same on both.
    for (group, name, lo, hi) in [
        ("pd", "stiffness", 10.0, 40.0),
        ("dc", "damping", 0.1, 2.0),
        ("knee", "stiffness", 10.0, 50.0),
    ] {
        let values: Vec<f32> = (0..num_envs).map(|_| rng.range(lo, hi)).collect();
        for b in [&mut *cpu, &mut *wgpu] {
            b.set_param(group, name, EnvIds::All, Values::PerEnv(&values))
                .unwrap();
        }
    }
    let mut cmd = ActuatorCmd::zeros(num_envs, t);
    let (mut a, mut b) = (vec![0.0f32; num_envs * c], vec![0.0f32; num_envs * c]);
    let (mut lags_a, mut lags_b) = (vec![0u32; num_envs], vec![0u32; num_envs]);
    let (mut window_worst, mut first_rss) = (0.0f32, None);
    let mut injected = 0usize;
    for step in 0..steps {
        let time = step as f32 * 0.005;
        for env in 0..num_envs {
            for j in 0..t {
                let phase = env as f32 * 0.37 + j as f32 * 0.11;
                let at = env * t + j;
                cmd.position_target[at] = 0.8 * (1.3 * time + phase).sin();
                cmd.velocity_target[at] = 0.5 * (0.7 * time + phase).cos();
                cmd.effort_target[at] = 0.3 * (2.1 * time + phase).sin();
                cmd.pos[at] = 0.6 * (1.1 * time + phase + 0.3).sin();
                cmd.vel[at] = 0.9 * (1.7 * time + phase).cos();
            }
        }
        if step % 5003 == 4999 {
            let at = rng.below(num_envs * t);
            cmd.pos[at] = f32::NAN;
            injected += 1;
        }
        if step % 997 == 996 {
            let ids: Vec<u32> = (0..3).map(|_| rng.below(num_envs) as u32).collect();
            for e in [&mut *cpu, &mut *wgpu] {
                e.reset(EnvIds::List(&ids)).unwrap();
            }
        }
        if step % 1009 == 1008 {
            let (env, value) = (rng.below(num_envs) as u32, rng.range(5.0, 40.0));
            for e in [&mut *cpu, &mut *wgpu] {
                e.set_param(
                    "dc",
                    "stiffness",
                    EnvIds::List(&[env]),
                    Values::Scalar(value),
                )
                .unwrap();
            }
        }
        if step % 1013 == 1012 {
            let lag = rng.below(4) as u32;
            for e in [&mut *cpu, &mut *wgpu] {
                e.set_lags("dc", EnvIds::All, Lags::Scalar(lag)).unwrap();
            }
        }
        if step % 2003 == 2002 {
            let act = rng.range(-1.0, 1.0);
            for e in [&mut *cpu, &mut *wgpu] {
                e.set_state("filter", "act", EnvIds::All, Values::Scalar(act))
                    .unwrap();
            }
        }
        cpu.step(&cmd).unwrap();
        wgpu.step(&cmd).unwrap();
        cpu.read_ctrl(&mut a).unwrap();
        wgpu.read_ctrl(&mut b).unwrap();
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            assert!(
                Tolerance::GPU.accepts(*x, *y),
                "step {step}, env {}, column {}: cpu {x}, gpu {y}",
                i / c,
                i % c
            );
            window_worst = window_worst.max((x - y).abs());
        }
        let bad_cpu = cpu.nonfinite_envs().unwrap().to_vec();
        assert_eq!(bad_cpu, wgpu.nonfinite_envs().unwrap(), "step {step}");
        for group in &delayed {
            cpu.read_lags(group, &mut lags_a).unwrap();
            wgpu.read_lags(group, &mut lags_b).unwrap();
            assert_eq!(lags_a, lags_b, "step {step}, group {group}");
        }
        if step % 10_000 == 9_999 {
            let rss = rss_bytes();
            eprintln!(
                "soak: steps {:>8}: max |Δctrl| {window_worst:.3e}, rss {} MB",
                step + 1,
                rss.map_or("?".into(), |r| format!("{:.1}", r as f64 / 1e6))
            );
            window_worst = 0.0;
            match (first_rss, rss) {
                (None, Some(r)) => first_rss = Some(r),
                (Some(first), Some(r)) => assert!(
                    r <= first + (16 << 20),
                    "resident memory grew from {first} to {r} bytes"
                ),
                _ => {}
            }
        }
    }
    eprintln!("soak: {steps} steps, {injected} NaN injections, CPU and GPU agreed every step");
}
