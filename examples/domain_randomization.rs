//! Domain randomization: per-env gains, effort limits and command lags, set in
//! place for a subset of envs, as an RL training loop does at every reset.
//!
//! Gains are scaled per env in [0.8, 1.2] (mjlab's `dr.pd_gains` with
//! `operation="scale"`), limits per (env, joint), and each env gets its own
//! lag in 0..=3 steps, pinned with `hold_prob = 1` so it stays until the next
//! randomization (the Isaac Lab habit, done the mjlab way with `set_lags`).
//!
//! Run: `cargo run --release --example domain_randomization`

use sinew::{
    ActuatorCmd, Backend, DelayCfg, Engine, EnvIds, GroupCfg, IdealPdCfg, Lags, PlanOptions, Robot,
    Values,
};

/// A tiny deterministic generator, so the example needs no dependency.
fn uniform(state: &mut u64, lo: f32, hi: f32) -> f32 {
    *state = state
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    lo + (hi - lo) * ((*state >> 40) as f32 / (1u64 << 24) as f32)
}

fn main() -> Result<(), sinew::Error> {
    let robot = Robot::from_joints(["hip", "thigh", "calf"]);
    let (num_envs, kp) = (1024, 40.0);
    let delay = DelayCfg {
        hold_prob: 1.0,
        ..DelayCfg::new(0, 3)
    };
    let groups = vec![GroupCfg::new(
        "leg",
        [".*"],
        IdealPdCfg::new(kp, 1.0).with_effort_limit(30.0),
    )
    .with_delay(delay)];
    let mut engine = Engine::auto(&robot, groups, num_envs, PlanOptions::default())?;

    // Randomize the even envs only; odd envs keep the defaults.
    let mut rng = 7u64;
    let even: Vec<u32> = (0..num_envs as u32).step_by(2).collect();
    let scales: Vec<f32> = even.iter().map(|_| uniform(&mut rng, 0.8, 1.2)).collect();
    let kps: Vec<f32> = scales.iter().map(|s| kp * s).collect();
    let limits: Vec<f32> = (0..even.len() * 3)
        .map(|_| uniform(&mut rng, 20.0, 30.0))
        .collect();
    let lags: Vec<u32> = even
        .iter()
        .map(|_| (uniform(&mut rng, 0.0, 4.0) as u32).min(3))
        .collect();
    engine.set_gains("leg", EnvIds::List(&even), Some(Values::PerEnv(&kps)), None)?;
    // A parameter resolved once is written without a name lookup, as a
    // training loop does at every reset.
    let effort_limit = engine.plan().param_ref("leg", "effort_limit")?;
    engine.set_param_at(
        effort_limit,
        EnvIds::List(&even),
        Values::PerEnvTarget(&limits),
    )?;
    engine.set_lags("leg", EnvIds::List(&even), Lags::PerEnv(&lags))?;

    // A step target from 0 to 0.5 rad at step 4: the torque reaches each env
    // after its own lag.
    let mut cmd = ActuatorCmd::zeros(num_envs, 3);
    let mut ctrl = vec![0.0; num_envs * 3];
    let mut arrival = vec![None; num_envs];
    for step in 0..10 {
        cmd.position_target.fill(if step >= 4 { 0.5 } else { 0.0 });
        engine.step(&cmd)?;
        engine.read_ctrl(&mut ctrl)?;
        for (env, a) in arrival.iter_mut().enumerate() {
            if a.is_none() && ctrl[env * 3] != 0.0 {
                *a = Some(step - 4);
            }
        }
    }
    for (i, &env) in even.iter().take(3).enumerate() {
        let env = env as usize;
        println!(
            "env {env}: kp {:.2}, hip torque {:.3} N·m, lag {} step(s)",
            kps[i],
            ctrl[env * 3],
            arrival[env].unwrap()
        );
        assert_eq!(arrival[env], Some(lags[i]));
        assert!((ctrl[env * 3] - (kps[i] * 0.5).min(limits[i * 3])).abs() < 1e-5);
    }
    println!(
        "env 1 (not randomized): hip torque {:.3} N·m, lag {}",
        ctrl[3],
        arrival[1].unwrap()
    );
    assert_eq!((ctrl[3], arrival[1]), (20.0, Some(0)));

    // A reset puts the lag back to 0 until the next randomization (mjlab 1.6.0).
    engine.reset(EnvIds::List(&[0]))?;
    let mut current = vec![0; num_envs];
    engine.read_lags("leg", &mut current)?;
    println!(
        "after reset: env 0 lag {}, env 2 lag {}",
        current[0], current[2]
    );
    assert_eq!((current[0], current[2]), (0, lags[1]));
    Ok(())
}
