//! MuJoCo 4's `<pid>` and `<dcmotor>` kinds beyond the golden files, on
//! every backend: scenario files declaring both, resets, per-env parameter
//! writes, a NaN control leaving only its env's states unchanged, the
//! force coupling with `<general>` actuators through tendon and joint
//! `actuatorfrcrange`s, and errors of the MJCF compile mapping naming
//! element, field and value.

use sinew::{
    ActuatorCfg, ActuatorCmd, CtrlInputs, DcMotorMjcf, EnvIds, Error, FixedTendon, GroupCfg,
    MjDcMotorCfg, MjGeneralCfg, MjPidCfg, Plan, PlanOptions, Robot, Transmission, Values,
};

use crate::support::{backends, joints};

const NUM_ENVS: usize = 4;
const SLOTS: [&str; 5] = ["slew", "integral", "temperature", "bristle", "current"];

/// A motor with every slot on, driven by a position controller.
fn motor() -> MjDcMotorCfg {
    <MjDcMotorCfg as sinew::Kind>::example()
}

fn plan(cfg: MjDcMotorCfg) -> Plan {
    Plan::new(
        &joints(1),
        vec![GroupCfg::new("m", ["j0"], cfg)],
        NUM_ENVS,
        PlanOptions::default(),
    )
    .unwrap()
}

fn cmd(target: f32) -> ActuatorCmd {
    let mut c = ActuatorCmd::zeros(NUM_ENVS, 1);
    c.position_target = vec![target; NUM_ENVS];
    c.vel = (0..NUM_ENVS).map(|e| 0.5 + e as f32).collect();
    c
}

/// `cmd(target)` with the joints turning the other way (so that the LuGre
/// bristles, settled under a constant speed, move again).
fn reversed(target: f32) -> ActuatorCmd {
    let mut c = cmd(target);
    c.vel.iter_mut().for_each(|v| *v = -*v);
    c
}

fn states(b: &mut dyn sinew::Backend) -> Vec<[f32; NUM_ENVS]> {
    SLOTS
        .iter()
        .map(|name| {
            let mut out = [0.0; NUM_ENVS];
            b.read_state("m", name, &mut out).unwrap();
            out
        })
        .collect()
}

/// A NaN control in env 2 leaves its five states where they were and zeroes
/// its outputs; the other envs' states move. A reset of envs 1 and 3 zeroes
/// their states only.
#[test]
fn nan_controls_and_resets_touch_only_their_env() {
    for (name, make, _) in backends() {
        let mut b = make(plan(motor()));
        b.set_input("voltage", &[1.0; NUM_ENVS]).unwrap();
        for _ in 0..5 {
            b.step(&cmd(0.4)).unwrap();
        }
        let before = states(b.as_mut());
        for (slot, values) in SLOTS.iter().zip(&before) {
            assert!(
                values.iter().all(|v| *v != 0.0),
                "{name}: {slot} moved: {values:?}"
            );
        }
        let mut c = reversed(0.4);
        c.position_target[2] = f32::NAN;
        b.step(&c).unwrap();
        assert_eq!(b.nonfinite_envs().unwrap(), &[2], "{name}");
        let after = states(b.as_mut());
        for (slot, (a, bf)) in SLOTS.iter().zip(after.iter().zip(&before)) {
            assert_eq!(a[2], bf[2], "{name}: env 2's {slot} must not move");
            for env in [0, 1, 3] {
                assert_ne!(a[env], bf[env], "{name}: env {env}'s {slot} advances");
            }
        }
        let mut force = [1.0; NUM_ENVS];
        b.read_output("actuator_force", &mut force).unwrap();
        assert_eq!(force[2], 0.0, "{name}");

        b.reset(EnvIds::List(&[1, 3])).unwrap();
        for (slot, values) in SLOTS.iter().zip(states(b.as_mut())) {
            assert_eq!([values[1], values[3]], [0.0, 0.0], "{name}: {slot}");
            assert_ne!(values[0], 0.0, "{name}: {slot}");
        }
    }
}

/// A torque past `f32`'s range from finite inputs zeroes and reports its
/// env alone, with the motor alone on its joint (on the GPU, its joint
/// effort computed per element) and beside another motor on the same joint
/// (on the GPU, the per-env stage sums the two).
#[test]
fn an_overflowing_torque_zeroes_and_reports_its_env_alone() {
    let motor = MjDcMotorCfg::new(2.0, 0.05, 0.002);
    let alone = plan(motor);
    let shared = Plan::new(
        &joints(1),
        vec![
            GroupCfg::new("m", ["j0"], motor),
            GroupCfg::new("other", ["j0"], motor),
        ],
        NUM_ENVS,
        PlanOptions::default(),
    )
    .unwrap();
    for plan in [alone, shared] {
        let nc = plan.num_ctrl();
        for (name, make, _) in backends() {
            let mut b = make(plan.clone());
            let mut r = [1.0; NUM_ENVS];
            r[1] = 1e-10;
            b.set_param("m", "resistance", EnvIds::All, Values::PerEnv(&r))
                .unwrap();
            let mut v = [12.0; NUM_ENVS];
            v[1] = 1e30;
            b.set_input("voltage", &v).unwrap();
            b.step(&cmd(0.0)).unwrap();
            assert_eq!(b.nonfinite_envs().unwrap(), &[1], "{name}, {nc} motors");
            let mut torque = vec![1.0; NUM_ENVS * nc];
            b.read_ctrl(&mut torque).unwrap();
            for (env, row) in torque.chunks_exact(nc).enumerate() {
                for &t in row {
                    let ok = if env == 1 {
                        t == 0.0
                    } else {
                        t.is_finite() && t != 0.0
                    };
                    assert!(ok, "{name}, {nc} motors, env {env}: {t}");
                }
            }
        }
    }
}

/// The stateless voltage-driven motor gives `(K/R)(v − K·V)` per env with
/// each env's own resistance.
#[test]
fn per_env_resistance_reaches_the_torque() {
    let mut m = MjDcMotorCfg::new(2.0, 0.05, 0.002);
    m.gear = 3.0;
    for (name, make, _) in backends() {
        let mut b = make(plan(m));
        let r: Vec<f32> = (0..NUM_ENVS).map(|e| 1.0 + e as f32).collect();
        b.set_param("m", "resistance", EnvIds::All, Values::PerEnv(&r))
            .unwrap();
        b.set_input("voltage", &[12.0; NUM_ENVS]).unwrap();
        let c = cmd(0.0);
        b.step(&c).unwrap();
        let mut torque = [0.0; NUM_ENVS];
        b.read_ctrl(&mut torque).unwrap();
        for env in 0..NUM_ENVS {
            let v = 3.0 * c.vel[env];
            let f = (0.05 / r[env]) * (12.0 - 0.05 * v);
            let ok = (torque[env] - 3.0 * f).abs() <= 1e-5 * f.abs().max(1.0);
            assert!(ok, "{name} env {env}: {} vs {}", torque[env], 3.0 * f);
        }
    }
}

/// Scenario files declare both kinds by MuJoCo's compiled names, `input`
/// as in MJCF, the timestep defaulting to the scenario's `dt`.
#[test]
fn scenarios_declare_pid_and_dcmotor() {
    let text = r#"num_envs = 2
steps = 3
dt = 0.004

[robot]
joints = ["hip", "knee"]

[[groups]]
name = "hip"
targets = ["hip"]
kind = "mj_pid"
input = "pos vel ff"
kp = 30.0
kv = 1.5
ki = 2.0
imax = 0.3
force_range = [-20.0, 20.0]

[[groups]]
name = "knee"
targets = ["knee"]
kind = "mj_dcmotor"
input = "pos"
resistance = 1.2
motorconst = 0.08
kp = 4.0
te = 0.0005
thermal_resistance = 3.0
thermal_capacitance = 40.0
ambient = 25.0
t0 = 25.0
alpha = 0.0039
gear = 9.0
"#;
    let scenario = sinew_cli::Scenario::parse(text, "mj4.toml").unwrap();
    let ActuatorCfg::MjPid(pid) = &scenario.groups[0].actuator else {
        panic!("not a pid")
    };
    assert_eq!(pid.inputs, CtrlInputs(7));
    assert_eq!((pid.kp, pid.kv, pid.timestep), (30.0, 1.5, 0.004));
    let ActuatorCfg::MjDcMotor(m) = &scenario.groups[1].actuator else {
        panic!("not a dcmotor")
    };
    assert_eq!(
        (m.inputs, m.te, m.gear, m.timestep),
        (CtrlInputs(1), 0.0005, 9.0, 0.004)
    );
    let summary = sinew_cli::run::run(
        &scenario,
        sinew_cli::run::BackendChoice::Cpu,
        None,
        None,
        None,
        false,
    )
    .unwrap();
    assert_eq!((summary.num_ctrl, summary.nonfinite_envs), (2, 0));
    let bad = text.replace("input = \"pos\"", "input = \"torque\"");
    let e = sinew_cli::Scenario::parse(&bad, "mj4.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("knee") && e.contains("torque"), "{e}");
    // A `<general>` form's bias beside the dcmotor gain, by MuJoCo's name.
    let affine = text.replace(
        "gear = 9.0",
        "gear = 9.0\nbias = \"affine\"\naffine_bias = [0.1, -0.5, 0.02]",
    );
    let scenario = sinew_cli::Scenario::parse(&affine, "mj4.toml").unwrap();
    let ActuatorCfg::MjDcMotor(m) = &scenario.groups[1].actuator else {
        panic!("not a dcmotor")
    };
    assert_eq!(
        (m.bias_type, m.affine_bias),
        (sinew::DcMotorBias::Affine, [0.1, -0.5, 0.02])
    );
    let bad = affine.replace("\"affine\"", "\"muscle\"");
    let e = sinew_cli::Scenario::parse(&bad, "mj4.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("knee") && e.contains("muscle") && e.contains("bias"),
        "{e}"
    );
}

/// The MJCF mapping refuses what MuJoCo's compiler refuses, naming the
/// element, the attribute and the value.
#[test]
fn mjcf_errors_name_element_field_and_value() {
    let compile = |json: &str| {
        serde_json::from_str::<DcMotorMjcf>(json)
            .unwrap()
            .compile(0.002)
    };
    for (json, field) in [
        (r#"{"motorconst": [-0.1], "resistance": 1.0}"#, "motorconst"),
        (r#"{"resistance": 1.0}"#, "motorconst"),
        (r#"{"motorconst": [0.1]}"#, "resistance"),
        (
            r#"{"motorconst": [0.1], "resistance": 1.0, "inductance": [-1e-3]}"#,
            "inductance",
        ),
        (
            r#"{"motorconst": [0.1], "resistance": 1.0, "thermal": [2.0, 0.0, 0.0]}"#,
            "thermal",
        ),
    ] {
        match compile(json) {
            Err(Error::InvalidParam {
                group, field: f, ..
            }) => {
                assert_eq!((group.as_str(), f.as_str()), ("dcmotor", field), "{json}");
            }
            other => panic!("{json}: {other:?}"),
        }
    }
    // `input="none"` needs no motor constant: a cogging-only motor.
    let m = compile(r#"{"resistance": 1.0, "input": "none", "cogging": [0.01, 8, 0]}"#).unwrap();
    assert_eq!(
        (m.motorconst, m.inputs),
        (0.0, CtrlInputs(CtrlInputs::NONE))
    );
}

/// mjlab's `test_builtin_dcmotor_actuator.py` numbers (V = 24, τ = 2,
/// ω = 100, so K = 0.24 and R = 2.88), on every backend: voltage mode
/// `K·V/R` at rest and `K(V − Kω)/R` moving; the position PID at rest
/// `qfrc = 5·pos` with stiffness 5 (joint-space); the controller's Vmax = 2
/// giving `K·2/R`; forcerange 0.1, with cogging added after the clamp.
#[test]
fn mjlab_builtin_dcmotor_test_numbers() {
    use sinew::{DcMotorMode, DcMotorParams, MjlabDcMotor};
    let datasheet = DcMotorParams::Datasheet {
        voltage: 24.0,
        stall_torque: 2.0,
        no_load_speed: 100.0,
    };
    let (k, r) = (0.24f32, 2.88f32);
    let run = |motor: MjlabDcMotor, pos: f32, vel: f32, target: f32, volts: f32| -> Vec<f32> {
        let cfg = motor.compile(0.002).unwrap();
        approx::assert_relative_eq!(cfg.motorconst, k, max_relative = 1e-6);
        approx::assert_relative_eq!(cfg.resistance, r, max_relative = 1e-6);
        let plan = Plan::new(
            &joints(1),
            vec![GroupCfg::new("m", ["j0"], cfg)],
            1,
            PlanOptions::default(),
        )
        .unwrap();
        backends()
            .into_iter()
            .map(|(_, make, _)| {
                let mut b = make(plan.clone());
                b.set_input("voltage", &[volts]).unwrap();
                let mut c = ActuatorCmd::zeros(1, 1);
                (c.pos[0], c.vel[0], c.position_target[0]) = (pos, vel, target);
                b.step(&c).unwrap();
                let mut out = [0.0];
                b.read_ctrl(&mut out).unwrap();
                out[0]
            })
            .collect()
    };
    let close = |got: Vec<f32>, want: f32| {
        for g in got {
            approx::assert_relative_eq!(g, want, max_relative = 1e-5, epsilon = 1e-6);
        }
    };
    let mut voltage = MjlabDcMotor::new(datasheet);
    voltage.mode = DcMotorMode::Voltage;
    close(run(voltage, 0.0, 0.0, 0.0, 12.0), k * 12.0 / r);
    close(
        run(voltage, 0.0, 10.0, 0.0, 12.0),
        k * (12.0 - k * 10.0) / r,
    );
    let mut pid = MjlabDcMotor::new(datasheet);
    pid.stiffness = 5.0;
    close(run(pid, 0.0, 0.0, 0.3, 0.0), 5.0 * 0.3);
    pid.voltage_limit = 2.0;
    pid.stiffness = 500.0;
    close(run(pid, 0.0, 0.0, 0.3, 0.0), k * 2.0 / r);
    let mut clamped = voltage;
    clamped.effort_limit = Some(0.1);
    close(run(clamped, 0.0, 0.0, 0.0, 12.0), 0.1);
    clamped.cogging = Some([0.02, 4.0, 0.3]);
    close(
        run(clamped, 0.2, 0.0, 0.0, 12.0),
        0.1 + 0.02 * (4.0f32 * 0.2 + 0.3).sin(),
    );
    let mut bad = voltage;
    bad.stiffness = 1.0;
    assert!(bad.to_mjcf().unwrap_err().to_string().contains("stiffness"));
}

/// A scenario group may write a MuJoCo 4 kind as its MJCF element's
/// attributes (`mjcf = { … }`), compiled at the scenario's dt exactly as
/// `DcMotorMjcf`/`PidMjcf` compile them; attributes that need the model, or
/// fields beside `mjcf`, are errors naming the group.
#[test]
fn scenarios_take_mjcf_attributes() {
    let text = |extra: &str| {
        format!(
            r#"num_envs = 1
steps = 2
dt = 0.005

[robot]
joints = ["hip", "knee"]

[[groups]]
name = "hip"
targets = ["hip"]
kind = "mj_dcmotor"
mjcf = {{ motorconst = [0.05], nominal = [24.0, 0.5, 400.0], damping = 0.001, thermal = [2.0, 0.0, 100.0, 0.0039, 25.0, 25.0], input = "pos vel", controller = [3.0, 0.0, 0.1, 0.0, 0.0, 24.0] }}

[[groups]]
name = "knee"
targets = ["knee"]
kind = "mj_pid"
mjcf = {{ kp = 20.0, kv = 1.0, ki = 3.0, imax = 0.2, posrange = [-1.0, 1.0] }}
{extra}
"#
        )
    };
    let scenario = sinew_cli::Scenario::parse(&text(""), "mjcf.toml").unwrap();
    let ActuatorCfg::MjDcMotor(m) = &scenario.groups[0].actuator else {
        panic!("not a dcmotor")
    };
    let want: DcMotorMjcf = serde_json::from_str(
        r#"{"motorconst": [0.05], "nominal": [24.0, 0.5, 400.0], "damping": 0.001,
            "thermal": [2.0, 0.0, 100.0, 0.0039, 25.0, 25.0], "input": "pos vel",
            "controller": [3.0, 0.0, 0.1, 0.0, 0.0, 24.0]}"#,
    )
    .unwrap();
    assert_eq!(*m, want.compile(0.005).unwrap());
    // The thermal time constant replaced C (MuJoCo 4.0): 100 s / 2 K/W.
    assert_eq!(m.thermal_capacitance, 50.0);
    let ActuatorCfg::MjPid(p) = &scenario.groups[1].actuator else {
        panic!("not a pid")
    };
    assert_eq!(
        (p.kp, p.kv, p.ki, p.pos_range),
        (20.0, 1.0, 3.0, [-1.0, 1.0])
    );
    for (bad, words) in [
        (text("").replace("kv = 1.0", "dampratio = 1.0"), "dampratio"),
        (
            text("").replace("kind = \"mj_pid\"", "kind = \"mj_pid\"\nkp = 3.0"),
            "`kp` beside `mjcf`",
        ),
        (
            text("").replace("motorconst = [0.05]", "motorconst = [-0.05]"),
            "motorconst",
        ),
    ] {
        let e = sinew_cli::Scenario::parse(&bad, "mjcf.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("field `mjcf`") && e.contains(words), "{e}");
    }
}

/// MuJoCo's coupling, by hand in f64: a `<pid>` and a `<general>` motor on
/// a fixed tendon whose `actuatorfrcrange` scales their summed force, and a
/// `<pid>` and a `<dcmotor>` with cogging on a joint whose
/// `actuatorfrcrange` clamps the summed effort (cogging after the clamp of
/// its own force, inside the joint's). Env 2's NaN target zeroes env 2
/// alone; the other envs read what they read without it.
#[test]
fn coupling_scales_tendon_forces_and_clamps_joint_sums() {
    let robot = Robot {
        joints: vec!["j0".into(), "j1".into(), "j2".into()],
        tendons: vec!["t0".into()],
        fixed_tendons: vec![FixedTendon {
            name: "t0".into(),
            joints: vec![("j0".into(), 1.0), ("j1".into(), -0.5)],
            actuator_force_range: Some([-0.4, 0.4]),
        }],
        joint_actuator_force_ranges: vec![("j2".into(), [-0.5, 0.35])],
        ..Robot::default()
    };
    let (kp, kp2) = (5.0f32, 4.0f32);
    let mut dc = MjDcMotorCfg::new(1.5, 0.08, 0.002);
    (dc.cogging_amplitude, dc.cogging_poles, dc.cogging_phase) = (0.03, 6.0, 0.2);
    dc.force_range = [-0.3, 0.3];
    let groups = vec![
        GroupCfg::new("tendon_pid", ["t0"], MjPidCfg::new(kp, 0.0, 0.002))
            .with_transmission(Transmission::Tendon),
        GroupCfg::new("tendon_motor", ["t0"], MjGeneralCfg::motor())
            .with_transmission(Transmission::Tendon),
        GroupCfg::new("joint_pid", ["j2"], MjPidCfg::new(kp2, 0.0, 0.002)),
        GroupCfg::new("joint_dc", ["j2"], dc),
    ];
    let plan = Plan::new(&robot, groups, NUM_ENVS, PlanOptions::default()).unwrap();
    // Command columns: j0, j1, j2, then t0.
    let mut c = ActuatorCmd::zeros(NUM_ENVS, 4);
    let voltage: Vec<f32> = (0..NUM_ENVS)
        .flat_map(|e| [0.0, 0.0, 6.0 * e as f32 - 8.0, 0.0])
        .collect();
    for e in 0..NUM_ENVS {
        let x = e as f32;
        let row = &mut c.pos[4 * e..4 * e + 4];
        row.copy_from_slice(&[0.1 * x, -0.2, 0.3 - 0.2 * x, 0.0]);
        row[3] = row[0] - 0.5 * row[1];
        c.vel[4 * e + 2] = 1.0 - x;
        c.position_target[4 * e + 3] = 0.05 * x * x;
        c.effort_target[4 * e + 3] = 0.1 - 0.15 * x;
        c.position_target[4 * e + 2] = 0.1 * x - 0.05;
    }
    // The expectation, in f64: per env the joint efforts of j0, j1, j2.
    let want = |e: usize| -> [f64; 3] {
        let at = |v: &[f32], k: usize| f64::from(v[4 * e + k]);
        let length = at(&c.pos, 3);
        let (f_pid, f_motor) = (
            f64::from(kp) * (at(&c.position_target, 3) - length),
            at(&c.effort_target, 3),
        );
        let total = f_pid + f_motor;
        let scale = if total > 0.4 {
            0.4 / total
        } else if total < -0.4 {
            -0.4 / total
        } else {
            1.0
        };
        let tendon = (f_pid + f_motor) * scale;
        let q2 = at(&c.pos, 2);
        let v2 = at(&c.vel, 2);
        let pid2 = f64::from(kp2) * (at(&c.position_target, 2) - q2);
        let (k, r) = (0.08, 1.5);
        let motor = (k / r * (f64::from(voltage[4 * e + 2]) - k * v2)).clamp(-0.3, 0.3)
            + 0.03 * (6.0 * q2 + 0.2).sin();
        [tendon, -0.5 * tendon, (pid2 + motor).clamp(-0.5, 0.35)]
    };
    let scaled = (0..NUM_ENVS)
        .filter(|&e| (want(e)[0] - 0.4).abs() < 1e-12 || (want(e)[0] + 0.4).abs() < 1e-12);
    assert!(scaled.count() >= 2, "some envs hit the tendon range");
    let clamped = (0..NUM_ENVS).filter(|&e| want(e)[2] == 0.35 || want(e)[2] == -0.5);
    assert!(clamped.count() >= 1, "some env hits the joint range");
    for (name, make, _) in backends() {
        let mut b = make(plan.clone());
        b.set_input("voltage", &voltage).unwrap();
        b.step(&c).unwrap();
        let mut effort = vec![0.0f32; NUM_ENVS * 3];
        b.read_joint_effort(&mut effort).unwrap();
        for e in 0..NUM_ENVS {
            for (j, w) in want(e).iter().enumerate() {
                approx::assert_relative_eq!(
                    f64::from(effort[3 * e + j]),
                    w,
                    epsilon = 1e-5,
                    max_relative = 1e-5
                );
            }
        }
        let mut bad = c.clone();
        bad.position_target[4 * 2 + 3] = f32::NAN;
        let mut again = effort.clone();
        b.reset(EnvIds::All).unwrap();
        b.step(&bad).unwrap();
        assert_eq!(b.nonfinite_envs().unwrap(), &[2], "{name}");
        b.read_joint_effort(&mut again).unwrap();
        for e in 0..NUM_ENVS {
            let row = &again[3 * e..3 * e + 3];
            if e == 2 {
                assert_eq!(row, [0.0; 3], "{name}");
            } else {
                assert_eq!(row, &effort[3 * e..3 * e + 3], "{name}: env {e}");
            }
        }
    }
}

/// Without a range to couple them, the joint efforts of `pid`/`dcmotor`
/// columns are the sums of their ctrl values (two actuators on one joint
/// add up), after `step` and after `step_into` alike.
#[test]
fn uncoupled_joint_efforts_sum_the_ctrl_values() {
    let groups = vec![
        GroupCfg::new("a", ["j0"], MjPidCfg::new(5.0, 0.5, 0.002)),
        GroupCfg::new("b", ["j0", "j1"], MjPidCfg::new(2.0, 0.0, 0.002)),
    ];
    let plan = Plan::new(&joints(2), groups, NUM_ENVS, PlanOptions::default()).unwrap();
    let mut c = ActuatorCmd::zeros(NUM_ENVS, 2);
    for (k, v) in c.position_target.iter_mut().enumerate() {
        *v = 0.1 * k as f32 - 0.35;
    }
    c.vel.fill(0.2);
    for (name, make, _) in backends() {
        let mut b = make(plan.clone());
        for into in [false, true] {
            let mut ctrl = vec![0.0f32; NUM_ENVS * 3];
            if into {
                b.step_into(&c, &mut ctrl).unwrap();
            } else {
                b.step(&c).unwrap();
                b.read_ctrl(&mut ctrl).unwrap();
            }
            let mut effort = vec![0.0f32; NUM_ENVS * 2];
            b.read_joint_effort(&mut effort).unwrap();
            for e in 0..NUM_ENVS {
                let row = &ctrl[3 * e..3 * e + 3];
                let want = [row[0] + row[1], row[2]];
                assert_eq!(
                    &effort[2 * e..2 * e + 2],
                    want,
                    "{name} into={into} env {e}"
                );
                assert_ne!(want[1], 0.0, "{name}");
            }
        }
    }
}
