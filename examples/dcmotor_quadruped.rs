//! A 12-joint quadruped on MuJoCo 4's `<dcmotor>` actuators, written as MJCF
//! attributes and compiled as MuJoCo compiles them, with the thermal model
//! and LuGre friction on: 256 robots trot in place for 30 s while the
//! windings heat up.
//!
//! Each joint's motor (Go1-sized: K = 0.12 N·m/A, R = 0.3 Ω, L = 0.15 mH,
//! gear 9, 2.6 N·m saturation on the motor side) runs MuJoCo's torque-space
//! PID on the position target. MuJoCo's controls are in actuator space, so
//! the target is `gear·q*`. The physics is a stand-in of a few lines: every
//! joint a 0.05 kg·m² link under a gravity-like load (3, 12 and 18 N·m for
//! hips, thighs and calves). The
//! winding temperature rise (the `temperature` state) is printed every 5 s
//! and drawn as an SVG.
//!
//! Run: `cargo run --release --example dcmotor_quadruped`

use sinew::{ActuatorCmd, Backend, DcMotorMjcf, Engine, GroupCfg, PlanOptions, Robot};
use sinew_cli::svg::{line_plot, Series};

const DT: f32 = 0.002;
const GEAR: f32 = 9.0;
const INERTIA: f32 = 0.05;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let legs = ["FL", "FR", "RL", "RR"];
    let parts = ["hip", "thigh", "calf"];
    let robot = Robot::from_joints(legs.iter().flat_map(|l| parts.map(|p| format!("{l}_{p}"))));
    // As one would write it in MJCF:
    // <dcmotor motorconst="0.12" resistance="0.3" inductance="0.00015" gear="9" input="pos vel"
    //          saturation="2.6" controller="0.5 0 0.02 0 0 24"
    //          thermal="2.0 50 0 0.00393 25 25" lugre="500 0.1 0.05 0.08 0.5"/>
    let mjcf: DcMotorMjcf = serde_json::from_str(
        r#"{"motorconst": [0.12], "resistance": 0.3, "inductance": [0.00015], "gear": [9],
            "input": "pos vel", "saturation": [2.6], "controller": [0.5, 0, 0.02, 0, 0, 24],
            "thermal": [2.0, 50, 0, 0.00393, 25, 25], "lugre": [500, 0.1, 0.05, 0.08, 0.5]}"#,
    )?;
    let motor = mjcf.compile(DT)?;
    println!(
        "compiled: t_e = {:.2e} s, thermal C = {} J/K, saturation ±{} N·m",
        motor.te, motor.thermal_capacitance, motor.force_range[1]
    );
    let num_envs = 256;
    let group = GroupCfg::new("legs", [".*"], motor);
    let mut engine = Engine::auto(&robot, vec![group], num_envs, PlanOptions::default())?;
    println!("backend: {}", engine.description());
    let n = robot.num_targets();
    let size = num_envs * n;

    let mut cmd = ActuatorCmd::zeros(num_envs, n);
    let mut tau = vec![0.0; size];
    let mut temperature = vec![0.0; size];
    let steps = (30.0 / DT) as usize;
    let mut curve: Vec<[f32; 3]> = Vec::new();
    let mut times = Vec::new();
    for step in 0..=steps {
        let t = step as f32 * DT;
        for (i, target) in cmd.position_target.iter_mut().enumerate() {
            let (env, joint) = (i / n, i % n);
            let phase =
                0.3 * env as f32 / num_envs as f32 + if joint / 3 % 2 == 0 { 0.0 } else { 0.5 };
            let swing = 0.4 * (std::f32::consts::TAU * (1.5 * t + phase)).sin();
            *target = GEAR * swing;
            cmd.velocity_target[i] = 0.0;
        }
        if step % 50 == 0 {
            engine.read_state("legs", "temperature", &mut temperature)?;
            let mean = |part: usize| -> f32 {
                let sum: f32 = (0..size)
                    .filter(|i| i % 3 == part)
                    .map(|i| temperature[i])
                    .sum();
                sum / (size / 3) as f32
            };
            curve.push([mean(0), mean(1), mean(2)]);
            times.push(t);
            if step % 2500 == 0 {
                println!(
                    "t = {t:4.1} s: winding ΔT hip {:.3} K, thigh {:.3} K, calf {:.3} K",
                    mean(0),
                    mean(1),
                    mean(2)
                );
            }
        }
        if step == steps {
            break;
        }
        engine.step_into(&cmd, &mut tau)?;
        let joints = cmd.pos.iter_mut().zip(&mut cmd.vel).zip(&tau);
        for (i, ((q, v), &torque)) in joints.enumerate() {
            // The hips carry little; thighs and calves hold the body up.
            let load = match i % 3 {
                0 => -3.0 * q.sin(),
                1 => -12.0 * (*q + 0.8).sin(),
                _ => -18.0 * (*q - 1.2).sin(),
            };
            *v += (torque + load) / INERTIA * DT;
            *q += *v * DT;
        }
    }
    assert!(engine.nonfinite_envs()?.is_empty());
    let last = curve.last().copied().unwrap_or_default();
    // The windings heat up steadily, the loaded calves most, the hips least.
    for (part, &now) in last.iter().enumerate() {
        let halfway = curve[curve.len() / 2][part];
        assert!(halfway < now, "still heating: {halfway} then {now}");
    }
    assert!(last[0] < last[1] && last[1] < last[2], "ΔT {last:?}");
    assert!(last[2] > 1.0 && last[2] < 100.0, "ΔT {last:?}");
    let series: Vec<Series> = parts
        .iter()
        .enumerate()
        .zip(["#1f77b4", "#ff7f0e", "#2ca02c"])
        .map(|((k, name), color)| Series {
            name,
            color,
            points: times
                .iter()
                .zip(&curve)
                .map(|(t, c)| (f64::from(*t), f64::from(c[k])))
                .collect(),
        })
        .collect();
    let svg = line_plot(
        "dcmotor quadruped: mean winding temperature rise",
        "time (s)",
        "ΔT (K)",
        &series,
    );
    let path = std::env::temp_dir().join("dcmotor_quadruped_temperature.svg");
    std::fs::write(&path, svg)?;
    println!("wrote {}", path.display());
    Ok(())
}
