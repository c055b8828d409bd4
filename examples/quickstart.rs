//! Quickstart: a Unitree Go1 (12 joints) driven by DC motors, 4096 envs.
//!
//! Motor constants are mjlab's `unitree_go1/go1_constants.py`: rotor inertia
//! 0.000111842 kg·m², gear 6 (hip, thigh) and 9 (calf), limits 23.7 N·m at
//! 30.1 rad/s and 35.55 N·m at 20.06 rad/s, gains from a 10 Hz natural
//! frequency with damping ratio 2 on the reflected inertia. The DC curve takes
//! the stall torque equal to the limit, as Isaac Lab's Go1 `DCMotorCfg` does.
//!
//! Run: `cargo run --release --example quickstart`

use std::time::Instant;

use sinew::{ActuatorCmd, Backend, DcMotorCfg, Engine, GroupCfg, PlanOptions, Robot};

const ROTOR_INERTIA: f32 = 0.000_111_842;
const NATURAL_FREQ: f32 = 10.0 * 2.0 * std::f32::consts::PI;
const DAMPING_RATIO: f32 = 2.0;

/// mjlab's `ElectricActuator` turned into a DC motor group.
fn motor(
    name: &str,
    targets: &[&str],
    gear: f32,
    velocity_limit: f32,
    effort_limit: f32,
) -> GroupCfg {
    let armature = ROTOR_INERTIA * gear * gear;
    let dc = DcMotorCfg {
        stiffness: armature * NATURAL_FREQ * NATURAL_FREQ,
        damping: 2.0 * DAMPING_RATIO * armature * NATURAL_FREQ,
        effort_limit,
        saturation_effort: effort_limit,
        velocity_limit,
    };
    GroupCfg::new(name, targets.iter().copied(), dc).with_armature(armature)
}

fn main() -> Result<(), sinew::Error> {
    let legs = ["FR", "FL", "RR", "RL"];
    let robot = Robot::from_joints(
        legs.iter()
            .flat_map(|leg| ["hip", "thigh", "calf"].map(|j| format!("{leg}_{j}_joint"))),
    );
    let groups = || {
        vec![
            motor("hip", &[".*_hip_joint", ".*_thigh_joint"], 6.0, 30.1, 23.7),
            motor("knee", &[".*_calf_joint"], 9.0, 20.06, 35.55),
        ]
    };
    let num_envs = 4096;
    let mut engine = Engine::auto(&robot, groups(), num_envs, PlanOptions::default())?;
    println!("backend: {}", engine.description());
    println!("gpu: {}", sinew::gpu_status());

    // Every env 0.1 rad short of its target, at rest; env 1's calves spin at
    // 15 rad/s as commanded, far from their target: the speed curve caps them.
    let mut cmd = ActuatorCmd::zeros(num_envs, robot.num_targets());
    cmd.position_target.fill(0.1);
    for calf in [2, 5, 8, 11] {
        cmd.position_target[robot.num_targets() + calf] = 1.0;
        cmd.vel[robot.num_targets() + calf] = 15.0;
        cmd.velocity_target[robot.num_targets() + calf] = 15.0;
    }
    let steps = 1000;
    let start = Instant::now();
    for _ in 0..steps {
        engine.step(&cmd)?;
    }
    // A GPU step returns once submitted: the read waits for all of them.
    let mut ctrl = vec![0.0; num_envs * engine.plan().num_ctrl()];
    engine.read_ctrl(&mut ctrl)?;
    let per_step = start.elapsed().as_secs_f64() / steps as f64;

    let columns = engine.plan().ctrl_columns();
    let hip = columns
        .iter()
        .position(|c| c.target == "FR_hip_joint")
        .unwrap();
    let calf = columns
        .iter()
        .position(|c| c.target == "FR_calf_joint")
        .unwrap();
    let row1 = engine.plan().num_ctrl();
    println!("env 0 FR_hip:  {:.4} N·m (kp 15.895 × 0.1 rad)", ctrl[hip]);
    println!("env 0 FR_calf: {:.4} N·m (kp 35.764 × 0.1 rad)", ctrl[calf]);
    println!(
        "env 1 FR_calf: {:.4} N·m (speed curve 35.55 × (1 − 15/20.06))",
        ctrl[row1 + calf]
    );
    println!(
        "{:.1} µs per step for {num_envs} envs × 12 joints",
        per_step * 1e6
    );

    // The other backend on the same command, when this machine has both.
    let other = match engine {
        Engine::Cpu(_) => Engine::gpu(&robot, groups(), num_envs, PlanOptions::default()),
        _ => Engine::cpu(&robot, groups(), num_envs, PlanOptions::default()),
    };
    if let Ok(mut other) = other {
        let mut theirs = vec![0.0; ctrl.len()];
        other.step(&cmd)?;
        other.read_ctrl(&mut theirs)?;
        let worst = ctrl
            .iter()
            .zip(&theirs)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        println!(
            "agreement with {}: max |Δ| {worst:e} N·m over {} efforts",
            other.description(),
            ctrl.len()
        );
        assert!(worst <= 1e-4, "the backends disagree by {worst}");
    }

    assert!((ctrl[hip] - 1.5895).abs() < 1e-3);
    assert!((ctrl[calf] - 3.5764).abs() < 1e-3);
    assert!((ctrl[row1 + calf] - 8.9672).abs() < 1e-3);
    assert!(engine.nonfinite_envs()?.is_empty());
    Ok(())
}
