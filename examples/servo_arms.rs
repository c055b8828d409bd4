//! Two SO-ARM100 arms (12 joints) of Feetech STS3215 servos, modelled by
//! BAM's shipped STS3215 fit (`sts3215/m1`): the firmware's rate-limited
//! target, the DC motor, and the friction budget the simulator applies.
//!
//! Sinew computes each servo's motor torque and its friction (F_s, K_v);
//! the simulator, here a stand-in of a few lines integrating each joint as
//! a 0.3 kg link at 0.1 m under gravity with BAM's friction step, feeds back
//! the joint state and the external (gravity) torque. At 1 s the right
//! arm's wrist is switched off: it falls until the servo's static friction
//! holds the link. Each env's motor constant is drawn
//! ±10% around the fit, as domain randomization does.
//!
//! Run: `cargo run --release --example servo_arms`

use sinew::bam::{bam_fit, BamSettings};
use sinew::{ActuatorCmd, Backend, Engine, EnvIds, GroupCfg, PlanOptions, Robot, Values};

const DT: f32 = 0.005;
const MASS: f32 = 0.3;
const LENGTH: f32 = 0.1;
const GRAVITY: f32 = 9.80665;

fn main() -> Result<(), sinew::Error> {
    let joints = [
        "Rotation",
        "Pitch",
        "Elbow",
        "Wrist_Pitch",
        "Wrist_Roll",
        "Jaw",
    ];
    let robot = Robot::from_joints(
        ["left", "right"]
            .iter()
            .flat_map(|arm| joints.map(|j| format!("{arm}_{j}"))),
    );
    let fit = bam_fit("sts3215/m1").expect("BAM ships an STS3215 fit");
    let servo = fit.servo("arms", BamSettings::default(), DT)?;
    let armature = fit.armature();
    let group = GroupCfg::new("arms", [".*"], servo.actuator()).with_armature(armature);
    let num_envs = 64;
    let mut engine = Engine::auto(&robot, vec![group], num_envs, PlanOptions::default())?;
    println!("backend: {}", engine.description());

    // Domain randomization: each env's k_t within ±10% of the fit's.
    let kt = fit.get("kt").expect("a fit has kt") as f32;
    let per_env: Vec<f32> = (0..num_envs)
        .map(|e| kt * (0.9 + 0.2 * e as f32 / (num_envs - 1) as f32))
        .collect();
    engine.set_param("arms", "kt", EnvIds::All, Values::PerEnv(&per_env))?;

    let n = robot.num_targets();
    let targets: Vec<f32> = (0..n).map(|j| if j < 6 { 0.5 } else { -0.3 }).collect();
    let wrist = 6 + 3; // right_Wrist_Pitch
    let inertia = armature + MASS * LENGTH * LENGTH;
    let mut cmd = ActuatorCmd::zeros(num_envs, n);
    for env in 0..num_envs {
        cmd.position_target[env * n..(env + 1) * n].copy_from_slice(&targets);
    }
    let size = num_envs * n;
    let (mut tau, mut fs, mut kv) = (vec![0.0; size], vec![0.0; size], vec![0.0; size]);
    let mut enable = vec![1.0; size];
    let mut gravity = vec![0.0; size];
    let steps = (2.0 / DT) as usize;
    for step in 0..steps {
        if step == steps / 2 {
            for env in 0..num_envs {
                enable[env * n + wrist] = 0.0;
            }
            engine.set_input("torque_enable", &enable)?;
        }
        // The simulator's other forces on each joint: gravity on the link.
        for (g, q) in gravity.iter_mut().zip(&cmd.pos) {
            *g = -MASS * GRAVITY * LENGTH * q.sin();
        }
        engine.set_input("external_torque", &gravity)?;
        engine.step_into(&cmd, &mut tau)?;
        engine.read_output("frictionloss", &mut fs)?;
        engine.read_output("damping", &mut kv)?;
        // The simulator's step, with the friction clipped against the
        // torque that would stop the joint (BAM's testbench step).
        for i in 0..size {
            let (q, dq) = (&mut cmd.pos[i], &mut cmd.vel[i]);
            let net = tau[i] + gravity[i];
            let stop = inertia / DT * *dq + net;
            let friction = -stop.signum() * stop.abs().min(fs[i] + kv[i] * dq.abs());
            let ddq = (net + friction) / inertia;
            *dq += ddq * DT;
            *q += *dq * DT;
        }
    }
    println!("after {:.1} s, env 0:", steps as f32 * DT);
    println!(
        "{:22} {:>8} {:>8} {:>10} {:>10} {:>10}",
        "joint", "target", "q", "τ_m N·m", "F_s N·m", "K_v"
    );
    for (j, name) in robot.joints.iter().enumerate() {
        println!(
            "{name:22} {:>8.3} {:>8.3} {:>10.4} {:>10.4} {:>10.4}",
            targets[j], cmd.pos[j], tau[j], fs[j], kv[j]
        );
    }
    for env in 0..num_envs {
        for (j, &target) in targets.iter().enumerate() {
            let (q, at) = (cmd.pos[env * n + j], env * n + j);
            assert!(fs[at] >= 0.0 && kv[at] >= 0.0 && q.is_finite());
            if j == wrist {
                // It swung toward hanging (q = 0) and stopped where gravity
                // no longer overcomes the servo's static friction.
                assert!(q > target + 0.1, "env {env}: the wrist fell: {q}");
                assert!(
                    MASS * GRAVITY * LENGTH * q.sin().abs() <= fs[at],
                    "env {env}: {q}"
                );
            } else {
                assert!((q - target).abs() < 0.05, "env {env}, joint {j}: {q}");
            }
        }
    }
    println!(
        "every env: each powered joint within 0.05 rad of its target; the switched-off wrist \
         fell to {:.3} rad, where its friction ({:.4} N·m) holds the link",
        cmd.pos[wrist], fs[wrist]
    );
    Ok(())
}
