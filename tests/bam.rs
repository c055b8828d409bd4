//! BAM's servo kinds beyond the golden files: properties of the firmware
//! laws and the friction budget on every backend, torque-enable switching,
//! per-env isolation of the input planes, errors naming group, field and
//! value, servo logs and parameter files that are not what they claim, and
//! presets in scenario files.

use proptest::prelude::*;
use sinew::bam::{BamFamily, BamSettings, BAM_FITS};
use sinew::{
    ActuatorCfg, ActuatorCmd, BamCurrentCfg, BamErobCfg, BamFriction, BamGo1Cfg, BamSts3215Cfg,
    BamVoltageCfg, EnvIds, Error, GroupCfg, Plan, PlanOptions, Values,
};
use sinew_cli::servo::{BamParams, ServoLog};
use sinew_cli::Scenario;

use crate::support::{backends, joints};

const NUM_ENVS: usize = 5;
const NUM_TARGETS: usize = 3;

/// Velocities (rad/s) past every servo's no-load speed.
const SPEED: std::ops::Range<f32> = -60.0..60.0;
const ANGLE: std::ops::Range<f32> = -3.0..3.0;
/// External torques (N·m).
const TORQUE: std::ops::Range<f32> = -30.0..30.0;

/// Friction coefficients of the sizes BAM fits, every term on.
fn friction_strategy() -> impl Strategy<Value = BamFriction> {
    (
        prop::collection::vec(0.0f32..0.5, 11),
        0.1f32..3.0,
        0.5f32..10.0,
    )
        .prop_map(|(k, dtheta_stribeck, alpha)| BamFriction {
            friction_base: k[0],
            friction_viscous: k[1],
            friction_stribeck: k[2],
            dtheta_stribeck,
            alpha,
            load_friction_base: k[3],
            load_friction_stribeck: k[4],
            load_friction_motor: k[5],
            load_friction_external: k[6],
            load_friction_motor_stribeck: k[7],
            load_friction_external_stribeck: k[8],
            load_friction_motor_quad: k[9] / 50.0,
            load_friction_external_quad: k[10] / 50.0,
        })
}

/// A servo of each family with random motor constants and friction.
fn servo_strategy() -> impl Strategy<Value = ActuatorCfg> {
    (
        0usize..5,
        0.1f32..3.0,
        1.0f32..6.0,
        0.1f32..1.0,
        1.0f32..800.0,
        friction_strategy(),
    )
        .prop_map(|(family, kt, r, fraction, kp, friction)| match family {
            0 => {
                let mut c = BamVoltageCfg::xl330(kt, r).with_friction(friction);
                (c.max_pwm, c.kp) = (fraction, kp);
                c.into()
            }
            1 => BamSts3215Cfg {
                max_pwm: fraction,
                friction,
                ..BamSts3215Cfg::new(kt, r, 0.005)
            }
            .into(),
            2 => BamCurrentCfg {
                bus_current: kp > 400.0,
                current_limit: 3.0 * fraction,
                kp,
                ..BamCurrentCfg::xl330(kt, r)
            }
            .with_friction(friction)
            .into(),
            3 => BamErobCfg {
                friction,
                ..BamErobCfg::new(kp / 10.0, 2.0 * fraction, kt, r)
            }
            .into(),
            _ => BamGo1Cfg {
                max_torque: 30.0 * fraction,
                friction,
                ..BamGo1Cfg::new(kp / 10.0)
            }
            .into(),
        })
}

/// One step of `servo` on every backend from random joint state, goals,
/// torque enables and external torques: `(backend, ctrl, command,
/// frictionloss, damping)`.
type Stepped = (&'static str, Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>);

fn step_all(servo: &ActuatorCfg, cmd: &ActuatorCmd, enable: &[f32], tau_e: &[f32]) -> Vec<Stepped> {
    let group = GroupCfg::new("servo", [".*"], servo.clone());
    let plan = Plan::new(
        &joints(NUM_TARGETS),
        vec![group],
        NUM_ENVS,
        PlanOptions::default(),
    )
    .expect("a valid servo");
    backends()
        .into_iter()
        .map(|(name, make, _)| {
            let mut b = make(plan.clone());
            b.set_input("torque_enable", enable).unwrap();
            b.set_input("external_torque", tau_e).unwrap();
            b.step(cmd).unwrap();
            let n = NUM_ENVS * NUM_TARGETS;
            let mut read = |plane: Option<&str>| {
                let mut out = vec![f32::NAN; n];
                match plane {
                    Some(p) => b.read_output(p, &mut out).unwrap(),
                    None => b.read_ctrl(&mut out).unwrap(),
                }
                out
            };
            let ctrl = read(None);
            let (command, fs, kv) = (
                read(Some("command")),
                read(Some("frictionloss")),
                read(Some("damping")),
            );
            (name, ctrl, command, fs, kv)
        })
        .collect()
}

fn cmd_of(goal: Vec<f32>, q: Vec<f32>, dq: Vec<f32>) -> ActuatorCmd {
    let mut cmd = ActuatorCmd::zeros(NUM_ENVS, NUM_TARGETS);
    (cmd.position_target, cmd.pos, cmd.vel) = (goal, q, dq);
    cmd
}

/// How far past a limit f32 rounding of the law may land.
fn slack(limit: f32) -> f32 {
    1e-5 * limit.abs().max(1.0)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// The firmware's command stays within its clips (duty within
    /// ±max_pwm, current within the limit and the back-EMF window, eRob
    /// amperes and Go1 torque within theirs), the friction budget is
    /// non-negative, and a disabled servo gives no torque, except the
    /// eRob's back-EMF braking above `max_volts/k_t`.
    #[test]
    fn servo_laws_stay_within_their_limits(
        servo in servo_strategy(),
        goal in prop::collection::vec(ANGLE, NUM_ENVS * NUM_TARGETS),
        q in prop::collection::vec(ANGLE, NUM_ENVS * NUM_TARGETS),
        dq in prop::collection::vec(SPEED, NUM_ENVS * NUM_TARGETS),
        enable in prop::collection::vec(prop::bool::ANY, NUM_ENVS * NUM_TARGETS),
        tau_e in prop::collection::vec(TORQUE, NUM_ENVS * NUM_TARGETS),
    ) {
        let enable: Vec<f32> = enable.into_iter().map(|e| f32::from(u8::from(e))).collect();
        let cmd = cmd_of(goal, q, dq.clone());
        for (backend, ctrl, command, fs, kv) in step_all(&servo, &cmd, &enable, &tau_e) {
            for i in 0..ctrl.len() {
                let (u, tau, v) = (command[i], ctrl[i], dq[i]);
                let at = || format!("{backend} {} [{i}]: command {u}, τ {tau}, q̇ {v}", servo.kind_name());
                prop_assert!(fs[i] >= 0.0 && kv[i] >= 0.0, "{}: F_s {}, K_v {}", at(), fs[i], kv[i]);
                match &servo {
                    ActuatorCfg::BamVoltage(c) => {
                        prop_assert!(u.abs() <= c.vin * c.max_pwm + slack(c.vin), "{}", at());
                    }
                    ActuatorCfg::BamSts3215(c) => {
                        prop_assert!(u.abs() <= c.vin * c.max_pwm + slack(c.vin), "{}", at());
                    }
                    ActuatorCfg::BamCurrent(c) => {
                        prop_assert!(u.abs() <= c.current_limit + slack(c.current_limit), "{}", at());
                        let hi = (c.vin - c.kt * v) / c.resistance;
                        let lo = (-c.vin - c.kt * v) / c.resistance;
                        prop_assert!(u <= hi.max(-c.current_limit) + slack(hi), "{}", at());
                        prop_assert!(u >= lo.min(c.current_limit) - slack(lo), "{}", at());
                    }
                    ActuatorCfg::BamErob(c) => {
                        prop_assert!(u.abs() <= c.max_amps + slack(c.max_amps), "{}", at());
                        if enable[i] == 0.0 {
                            // Back-EMF braking only: against q̇, and only past max_volts/k_t.
                            let braking = (c.kt * c.kt * v.abs() - c.kt * c.max_volts) / c.resistance;
                            prop_assert!((tau.abs() - braking.max(0.0)).abs() <= slack(braking), "{}", at());
                            prop_assert!(tau * v <= 0.0, "{}", at());
                        }
                    }
                    ActuatorCfg::BamGo1(c) => {
                        prop_assert!(u.abs() <= c.max_torque + slack(c.max_torque), "{}", at());
                    }
                    other => unreachable!("not a servo: {}", other.kind_name()),
                }
                if enable[i] == 0.0 && !matches!(servo, ActuatorCfg::BamErob(_)) {
                    prop_assert_eq!(tau, 0.0, "{}", at());
                }
            }
        }
    }
}

/// Switching the torque enable per (env, joint) between steps takes effect
/// at the next step, and a non-finite external torque zeroes that env only,
/// outputs included, on every backend.
#[test]
fn torque_enable_switches_and_a_bad_input_zeroes_only_its_env() {
    let servo: ActuatorCfg = BamVoltageCfg::xl330(0.37, 2.8)
        .with_friction(<BamFriction as sinew::Kind>::example())
        .into();
    let n = NUM_ENVS * NUM_TARGETS;
    let cmd = cmd_of(vec![0.5; n], vec![0.0; n], vec![0.2; n]);
    let mut enable = vec![1.0; n];
    let on = step_all(&servo, &cmd, &enable, &vec![0.1; n]);
    enable[4] = 0.0;
    let mut tau_e = vec![0.1; n];
    tau_e[2 * NUM_TARGETS + 1] = f32::NAN;
    let group = GroupCfg::new("servo", [".*"], servo.clone());
    let plan = Plan::new(
        &joints(NUM_TARGETS),
        vec![group],
        NUM_ENVS,
        PlanOptions::default(),
    )
    .unwrap();
    for (name, make, _) in backends() {
        let mut b = make(plan.clone());
        b.set_input("torque_enable", &enable).unwrap();
        b.set_input("external_torque", &tau_e).unwrap();
        b.step(&cmd).unwrap();
        assert_eq!(b.nonfinite_envs().unwrap(), &[2], "{name}");
        let (mut ctrl, mut fs) = (vec![f32::NAN; n], vec![f32::NAN; n]);
        b.read_ctrl(&mut ctrl).unwrap();
        b.read_output("frictionloss", &mut fs).unwrap();
        let reference = &on[0];
        for i in 0..n {
            let env = i / NUM_TARGETS;
            if env == 2 {
                assert_eq!((ctrl[i], fs[i]), (0.0, 0.0), "{name} [{i}]");
            } else if i == 4 {
                assert_eq!(ctrl[i], 0.0, "{name}: disabled");
            } else {
                approx::assert_relative_eq!(ctrl[i], reference.1[i], max_relative = 1e-5);
                approx::assert_relative_eq!(fs[i], reference.3[i], max_relative = 1e-5);
            }
        }
        // A later finite step brings env 2 back.
        b.set_input("external_torque", &vec![0.1; n]).unwrap();
        b.step(&cmd).unwrap();
        assert!(b.nonfinite_envs().unwrap().is_empty(), "{name}");
    }
}

/// Bad parameters, in configs and in setters, are errors naming the
/// group, the field and the value.
#[test]
fn bad_servo_parameters_name_group_field_and_value() {
    let plan_of = |servo: ActuatorCfg| {
        Plan::new(
            &joints(1),
            vec![GroupCfg::new("wrist", [".*"], servo)],
            2,
            PlanOptions::default(),
        )
    };
    let xl330 = || BamVoltageCfg::xl330(0.37, 2.8);
    let cases: Vec<(ActuatorCfg, &str, &str)> = vec![
        (
            BamVoltageCfg {
                resistance: 0.0,
                ..xl330()
            }
            .into(),
            "resistance",
            "0",
        ),
        (
            BamVoltageCfg {
                kt: -1.0,
                ..xl330()
            }
            .into(),
            "kt",
            "-1",
        ),
        (
            BamVoltageCfg {
                max_pwm: 1.5,
                ..xl330()
            }
            .into(),
            "max_pwm",
            "1.5",
        ),
        (
            BamVoltageCfg {
                max_pwm: 0.0,
                ..xl330()
            }
            .into(),
            "max_pwm",
            "0",
        ),
        (
            xl330()
                .with_friction(BamFriction {
                    friction_base: -0.1,
                    ..BamFriction::default()
                })
                .into(),
            "friction_base",
            "-0.1",
        ),
        (
            BamFriction {
                alpha: 0.0,
                ..BamFriction::default()
            }
            .into(),
            "alpha",
            "0",
        ),
        (
            BamErobCfg::new(10.0, 1.0, 4.5, f32::NAN).into(),
            "resistance",
            "NaN",
        ),
    ];
    for (servo, field, value) in cases {
        let e = plan_of(servo).unwrap_err();
        let message = e.to_string();
        assert!(
            matches!(&e, Error::InvalidParam { group, field: f, value: v, .. }
                if group == "wrist" && f == field && v == value),
            "{message}"
        );
        assert!(
            message.contains("wrist") && message.contains(field),
            "{message}"
        );
    }
    // The same rules through the setter, by name or BAM's alias.
    let plan = plan_of(xl330().into()).unwrap();
    for (_, make, _) in backends() {
        let mut b = make(plan.clone());
        let e = b
            .set_param("wrist", "R", EnvIds::All, Values::Scalar(-2.0))
            .unwrap_err();
        assert!(e.to_string().contains("resistance = -2"), "{e}");
        let e = b
            .set_param("wrist", "K_mq", EnvIds::All, Values::Scalar(-1.0))
            .unwrap_err();
        assert!(
            e.to_string().contains("load_friction_motor_quad = -1"),
            "{e}"
        );
        let e = b.set_input("torque_enabled", &[1.0; 2]).unwrap_err();
        assert!(
            e.to_string().contains("torque_enabled") && e.to_string().contains("torque_enable"),
            "{e}"
        );
        let e = b.set_input("torque_enable", &[1.0; 3]).unwrap_err();
        assert!(e.to_string().contains("holds 3 values, expected 2"), "{e}");
    }
}

/// A file that is not a servo log, or not a BAM parameter file, is an
/// error that says what is wrong, never a panic.
#[test]
fn servo_logs_and_parameter_files_are_checked() {
    let log = |text: &str| ServoLog::from_value(&serde_json::from_str(text).unwrap(), "x.json");
    let entry = r#"{"position": 0.1, "speed": 0, "goal_position": 0.2, "torque_enable": true}"#;
    let ok =
        format!(r#"{{"mass": 0.5, "length": 0.1, "kp": 400, "dt": 0.005, "entries": [{entry}]}}"#);
    assert_eq!(log(&ok).unwrap().entries.len(), 1);
    for (text, says) in [
        (r#"{"kt": 0.4, "R": 4.0}"#.to_owned(), "no `entries` array"),
        (ok.replace(r#""mass": 0.5, "#, ""), "no `mass`"),
        (ok.replace("0.005", "0"), "`dt` = 0 must be > 0"),
        (ok.replace(&format!("[{entry}]"), "[]"), "empty"),
        (ok.replace("true", "\"yes\""), "torque_enable"),
        (
            ok.replace("\"speed\": 0", "\"speed\": \"fast\""),
            "entries[0].speed",
        ),
    ] {
        let e = log(&text).unwrap_err();
        assert!(
            e.contains("x.json is not a servo log") && e.contains(says),
            "{e}"
        );
    }
    let params = |text: &str| BamParams::from_value(&serde_json::from_str(text).unwrap(), None);
    let fit = params(r#"{"kt": 0.4, "R": 4.0, "model": "m1", "actuator": "xl330"}"#).unwrap();
    assert_eq!((fit.family, fit.get("R")), (BamFamily::Xl330, Some(4.0)));
    for (text, says) in [
        (r#"{"kt": 0.4}"#, "no `actuator` field"),
        (r#"{"kt": 0.4, "actuator": "xl999"}"#, "xl999"),
        (r#"{"kt": "big", "actuator": "xl330"}"#, "`kt`"),
        (r#"[1, 2]"#, "JSON object"),
    ] {
        let e = params(text).unwrap_err();
        assert!(e.contains(says), "{e}");
    }
    // A fit without a parameter the family needs names it.
    let e = BamFamily::Xl330
        .servo("wrist", &|_| None, BamSettings::default(), 0.005)
        .unwrap_err();
    assert!(
        e.to_string().contains("wrist") && e.to_string().contains("kt"),
        "{e}"
    );
}

/// Every shipped fit builds a valid servo and bench on the CPU, and a
/// scenario's `preset` takes the fit with the group's own overrides.
#[test]
fn presets_are_shipped_fits_with_overrides() {
    assert_eq!(BAM_FITS.len(), 37);
    for fit in BAM_FITS {
        let settings = BamSettings {
            kp: Some(32.0),
            ..BamSettings::default()
        };
        let servo = fit.servo("g", settings, 0.005).unwrap();
        let plan = |a: ActuatorCfg| {
            Plan::new(
                &joints(1),
                vec![GroupCfg::new("g", [".*"], a)],
                1,
                PlanOptions::default(),
            )
        };
        plan(servo.clone().actuator()).unwrap_or_else(|e| panic!("{}: {e}", fit.name()));
        let pendulum = sinew::Pendulum {
            mass: 0.5,
            length: 0.1,
            arm_mass: 0.0,
            armature: fit.armature(),
            q_offset: fit.q_offset(),
            dt: 0.005,
        };
        plan(servo.bench(pendulum)).unwrap_or_else(|e| panic!("{} bench: {e}", fit.name()));
    }
    let text = r#"
        name = "preset"
        num_envs = 2
        steps = 3
        dt = 0.005
        [robot]
        joints = ["a", "b"]
        [[groups]]
        name = "arm"
        targets = ["a"]
        preset = "xl330/m6"
        kp = 800
        friction = { friction_base = 0.02 }
        [[groups]]
        name = "base"
        targets = ["b"]
        preset = "sts3215/m1"
        armature = 0.5
    "#;
    let scenario = Scenario::parse(text, "preset.toml").unwrap();
    let fit = sinew::bam::bam_fit("xl330/m6").unwrap();
    let ActuatorCfg::BamVoltage(arm) = &scenario.groups[0].actuator else {
        panic!("xl330/m6 is a voltage servo")
    };
    assert_eq!(arm.kp, 800.0);
    assert_eq!(arm.kt, fit.get("kt").unwrap() as f32);
    assert_eq!(arm.friction.friction_base, 0.02);
    assert_eq!(
        arm.friction.load_friction_motor_quad,
        fit.get("load_friction_motor_quad").unwrap() as f32
    );
    assert_eq!(scenario.groups[0].armature, Some(fit.armature()));
    let ActuatorCfg::BamSts3215(base) = &scenario.groups[1].actuator else {
        panic!("sts3215/m1 is an STS3215")
    };
    assert_eq!((base.dt, scenario.groups[1].armature), (0.005, Some(0.5)));
    let bad = text.replace("sts3215/m1", "sts3215/m7");
    let e = Scenario::parse(&bad, "preset.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("preset.toml:17") && e.contains("no BAM fit `sts3215/m7`"),
        "{e}"
    );
}

/// `sinew replay`'s library path on one real log: BAM's own MAE for it with
/// the shipped M1 fit, the positions starting at the log's first entry, and
/// a plot holding the three curves.
#[test]
fn one_log_replays_to_bams_error_and_plots() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let log = ServoLog::read(&root.join("data/bam-xl330/2026-01-15_10h28m49.json")).unwrap();
    let params = BamParams::read(&root.join("data/bam-xl330/xl330-m1-params.json"), None).unwrap();
    let golden: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("tests/golden/bam/rollouts.json")).unwrap(),
    )
    .unwrap();
    let bam = golden["rollouts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "2026-01-15_10h28m49/m1")
        .unwrap();
    for (name, make, _) in backends() {
        let make = |plan: Plan| Ok(make(plan));
        let rollout =
            &sinew_cli::servo::replay(std::slice::from_ref(&log), &params, &make).unwrap()[0];
        assert_eq!(rollout.positions.len(), log.entries.len(), "{name}");
        assert_eq!(
            rollout.positions[0],
            f64::from(log.entries[0].position as f32)
        );
        approx::assert_relative_eq!(
            rollout.mae,
            bam["mae"].as_f64().unwrap(),
            max_relative = 1e-4
        );
        approx::assert_relative_eq!(
            rollout.rmse,
            bam["rmse"].as_f64().unwrap(),
            max_relative = 1e-4
        );
        let svg = sinew_cli::servo::plot_svg(&log, rollout, "a <title>");
        assert_eq!(
            svg.matches("<path d=\"M").count(),
            1 + 3 * 2,
            "axes, curves, legend"
        );
        assert!(svg.contains("a &lt;title&gt;"));
    }
}
