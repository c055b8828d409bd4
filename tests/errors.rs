//! Every configuration and API error: the right variant, and a message that
//! names the culprit (group, field, value, regex, names).

use sinew::{
    ActuatorCmd, Backend, BiasType, BuiltinMotorCfg, CommandField, CpuBackend, DcMotorCfg,
    DelayCfg, DelayShare, DynType, EnvIds, Error, GainType, GroupCfg, IdealPdCfg, Lags,
    NativeActuator, Plan, PlanOptions, Resample, Robot, Transmission, Values, WrappedCfg,
};

use crate::support::joints;

fn robot() -> Robot {
    Robot {
        joints: vec![
            "FL_hip".into(),
            "FL_knee".into(),
            "FR_hip".into(),
            "FR_knee".into(),
        ],
        tendons: vec!["t_sum".into()],
        sites: vec!["foot".into()],
        ..Robot::default()
    }
}

fn plan(groups: Vec<GroupCfg>) -> Result<Plan, Error> {
    Plan::new(&robot(), groups, 4, PlanOptions::default())
}

fn pd(name: &str, targets: &[&str]) -> GroupCfg {
    GroupCfg::new(name, targets.iter().copied(), IdealPdCfg::new(10.0, 1.0))
}

fn dc() -> DcMotorCfg {
    DcMotorCfg {
        stiffness: 10.0,
        damping: 1.0,
        effort_limit: 20.0,
        saturation_effort: 30.0,
        velocity_limit: 20.0,
    }
}

/// The error, and that its message contains every piece.
fn expect(result: Result<Plan, Error>, pieces: &[&str]) -> Error {
    let err = result.expect_err("must be rejected");
    let msg = err.to_string();
    for piece in pieces {
        assert!(msg.contains(piece), "message {msg:?} lacks {piece:?}");
    }
    err
}

#[test]
fn regex_that_matches_nothing() {
    let err = expect(
        plan(vec![pd("legs", &["RL_.*"])]),
        &["legs", "`RL_.*`", "FL_hip, FL_knee, FR_hip, FR_knee"],
    );
    assert!(matches!(err, Error::NoMatch { .. }));
    // A tendon name given to a joint group says where it does match.
    expect(
        plan(vec![pd("legs", &["t_.*"])]),
        &["tendons [t_sum]", "transmission"],
    );
}

#[test]
fn name_matched_by_two_regexes_of_one_group() {
    let err = expect(
        plan(vec![pd("legs", &["FL_.*", ".*_hip"])]),
        &["legs", "FL_hip", "`FL_.*`", "`.*_hip`"],
    );
    assert!(matches!(err, Error::AmbiguousMatch { .. }));
}

#[test]
fn target_claimed_by_two_groups() {
    let err = expect(
        plan(vec![pd("front", &["F._hip"]), pd("left", &["FL_.*"])]),
        &["FL_hip", "`front`", "`left`", "`FL_.*`"],
    );
    assert!(matches!(err, Error::TargetClaimed { .. }));
}

#[test]
fn structural_errors() {
    assert!(matches!(
        expect(plan(vec![pd("legs", &["(FL"])]), &["legs", "`(FL`"]),
        Error::InvalidRegex { .. }
    ));
    assert!(matches!(
        expect(plan(vec![pd("legs", &[])]), &["legs"]),
        Error::NoTargets { .. }
    ));
    let twice = expect(
        plan(vec![pd("legs", &["FL_.*"]), pd("legs", &["FR_.*"])]),
        &["legs"],
    );
    assert!(matches!(twice, Error::DuplicateGroup { .. }));
    let robot = Robot::from_joints(["a", "a"]);
    let err = Plan::new(&robot, vec![], 1, PlanOptions::default()).unwrap_err();
    assert!(matches!(err, Error::DuplicateTarget { .. }) && err.to_string().contains("`a`"));
    assert_eq!(
        Plan::new(&robot, vec![], 0, PlanOptions::default()).unwrap_err(),
        Error::NoEnvs
    );
}

#[test]
fn invalid_parameters_name_group_field_and_value() {
    let cases: Vec<(GroupCfg, [&str; 3])> = vec![
        (
            GroupCfg::new("g", [".*"], IdealPdCfg::new(f32::NAN, 1.0)),
            ["`g`", "stiffness", "NaN"],
        ),
        (
            GroupCfg::new("g", [".*"], IdealPdCfg::new(1.0, -2.0)),
            ["`g`", "damping", "-2"],
        ),
        (
            GroupCfg::new(
                "g",
                [".*"],
                IdealPdCfg::new(1.0, 1.0).with_effort_limit(0.0),
            ),
            ["`g`", "effort_limit", "0"],
        ),
        (
            GroupCfg::new(
                "g",
                [".*"],
                DcMotorCfg {
                    saturation_effort: 0.0,
                    ..dc()
                },
            ),
            ["`g`", "saturation_effort", "0"],
        ),
        (
            GroupCfg::new(
                "g",
                [".*"],
                DcMotorCfg {
                    velocity_limit: 0.0,
                    ..dc()
                },
            ),
            ["`g`", "velocity_limit", "0"],
        ),
        (
            GroupCfg::new(
                "g",
                [".*"],
                DcMotorCfg {
                    velocity_limit: f32::INFINITY,
                    ..dc()
                },
            ),
            ["`g`", "velocity_limit", "inf"],
        ),
        (
            GroupCfg::new(
                "g",
                [".*"],
                BuiltinMotorCfg {
                    effort_limit: 5.0,
                    gear: 0.0,
                },
            ),
            ["`g`", "gear", "0"],
        ),
        (
            pd("g", &[".*"]).with_delay(DelayCfg::new(3, 1)),
            ["`g`", "delay.min_lag", "3"],
        ),
        (
            pd("g", &[".*"]).with_delay(DelayCfg::new(0, 5000)),
            ["`g`", "delay.max_lag", "5000"],
        ),
        (
            pd("g", &[".*"]).with_delay(DelayCfg {
                hold_prob: 1.5,
                ..DelayCfg::new(0, 2)
            }),
            ["`g`", "delay.hold_prob", "1.5"],
        ),
        (
            pd("g", &[".*"]).with_delay(DelayCfg {
                hold_prob: f32::NAN,
                ..DelayCfg::new(0, 2)
            }),
            ["`g`", "delay.hold_prob", "NaN"],
        ),
        (
            pd("g", &[".*"]).with_delay(DelayCfg {
                resample: Resample::OnReset,
                hold_prob: 0.5,
                ..DelayCfg::new(0, 2)
            }),
            ["`g`", "delay.hold_prob", "per-reset"],
        ),
        (
            pd("g", &[".*"]).with_armature(-0.1),
            ["`g`", "armature", "-0.1"],
        ),
    ];
    for (group, pieces) in cases {
        let err = expect(plan(vec![group]), &pieces);
        assert!(matches!(err, Error::InvalidParam { .. }), "{err:?}");
    }
}

#[test]
fn kinds_that_cannot_drive_a_site() {
    let site = |g: GroupCfg| g.with_transmission(Transmission::Site);
    let err = expect(
        plan(vec![site(pd("push", &["foot"]))]),
        &["`push`", "IdealPd", "site"],
    );
    assert!(matches!(err, Error::TransmissionNotSupported { .. }));
    let motor = site(GroupCfg::new("push", ["foot"], BuiltinMotorCfg::new(5.0)));
    assert_eq!(plan(vec![motor.clone()]).unwrap().num_ctrl(), 1);
    expect(
        plan(vec![motor.with_armature(0.1)]),
        &["`push`", "armature", "site"],
    );
}

#[test]
fn named_delay_buffer_with_different_settings() {
    let share = |g: GroupCfg, max| {
        g.with_delay(DelayCfg {
            share: DelayShare::Named("legs".into()),
            ..DelayCfg::new(0, max)
        })
    };
    let err = expect(
        plan(vec![
            share(pd("a", &["FL_.*"]), 2),
            share(pd("b", &["FR_.*"]), 3),
        ]),
        &["`legs`", "`a`", "`b`"],
    );
    assert!(matches!(err, Error::DelayShareMismatch { .. }));
}

#[test]
fn wrapped_groups() {
    let native = |name: &str, target: &str, bias, gainprm, biasprm| NativeActuator {
        name: name.into(),
        transmission: Transmission::Joint,
        target: target.into(),
        gain: GainType::Fixed,
        bias,
        dyn_type: DynType::None,
        gainprm,
        biasprm,
        general: None,
    };
    let mut robot = robot();
    let wrapped = || GroupCfg::new("xml", [".*"], WrappedCfg::default());
    let err = Plan::new(&robot, vec![wrapped()], 1, PlanOptions::default()).unwrap_err();
    assert!(
        matches!(err, Error::NoNativeActuator { .. }) && err.to_string().contains("FL_hip"),
        "{err}"
    );
    robot.native_actuators = vec![
        native(
            "hip_servo",
            "FL_hip",
            BiasType::Affine,
            [30.0, 0.0, 0.0],
            [0.0, -30.0, -2.0],
        ),
        native(
            "knee_motor",
            "FL_knee",
            BiasType::None,
            [1.0, 0.0, 0.0],
            [0.0; 3],
        ),
    ];
    let err = Plan::new(&robot, vec![wrapped()], 1, PlanOptions::default()).unwrap_err();
    assert!(matches!(err, Error::MixedCommandFields { .. }), "{err}");
    assert!(err.to_string().contains("hip_servo") && err.to_string().contains("knee_motor"));
    robot.native_actuators[1] = native(
        "knee_odd",
        "FL_knee",
        BiasType::Affine,
        [1.0, 0.0, 0.0],
        [0.0, -3.0, 0.0],
    );
    let err = Plan::new(&robot, vec![wrapped()], 1, PlanOptions::default()).unwrap_err();
    assert!(
        matches!(err, Error::UndetectedCommandField { .. }) && err.to_string().contains("knee_odd"),
        "{err}"
    );
    // Naming the field skips detection.
    let given = GroupCfg::new(
        "xml",
        [".*"],
        WrappedCfg {
            command_field: Some(CommandField::Position),
        },
    );
    assert_eq!(
        Plan::new(&robot, vec![given], 1, PlanOptions::default())
            .unwrap()
            .num_ctrl(),
        2
    );
}

fn backend() -> CpuBackend {
    let groups = vec![
        GroupCfg::new("legs", ["FL_.*"], dc()).with_delay(DelayCfg::new(1, 3)),
        pd("right", &["FR_.*"]),
    ];
    CpuBackend::new(plan(groups).unwrap())
}

#[test]
fn shape_errors_at_the_api() {
    let mut b = backend();
    let err = b.step(&ActuatorCmd::zeros(3, 6)).unwrap_err();
    assert!(
        matches!(
            err,
            Error::CmdDims {
                got_envs: 3,
                num_envs: 4,
                ..
            }
        ),
        "{err}"
    );
    let mut cmd = ActuatorCmd::zeros(4, 6);
    cmd.vel.pop();
    let err = b.step(&cmd).unwrap_err();
    assert!(
        matches!(
            err,
            Error::CmdShape {
                field: "vel",
                got: 23,
                expected: 24,
                ..
            }
        ),
        "{err}"
    );
    assert!(matches!(
        b.read_ctrl(&mut [0.0; 3]).unwrap_err(),
        Error::BufferShape { expected: 16, .. }
    ));
    assert!(matches!(
        b.read_lags("legs", &mut [0; 3]).unwrap_err(),
        Error::BufferShape { .. }
    ));
}

#[test]
fn setter_errors_name_the_culprit_and_write_nothing() {
    let mut b = backend();
    let before = b.ctrl().to_vec();
    let mut kp = [0.0f32; 8];
    let err = b
        .set_gains(
            "legs",
            EnvIds::List(&[0, 9]),
            Some(Values::Scalar(1.0)),
            None,
        )
        .unwrap_err();
    assert_eq!(
        err,
        Error::EnvOutOfRange {
            env: 9,
            num_envs: 4
        }
    );
    let err = b
        .set_param("arms", "stiffness", EnvIds::All, Values::Scalar(1.0))
        .unwrap_err();
    assert!(
        err.to_string().contains("`arms`") && err.to_string().contains("legs, right"),
        "{err}"
    );
    let err = b
        .set_param(
            "right",
            "saturation_effort",
            EnvIds::All,
            Values::Scalar(1.0),
        )
        .unwrap_err();
    assert!(
        matches!(err, Error::UnknownParam { .. })
            && err.to_string().contains("stiffness, damping, effort_limit"),
        "{err}"
    );
    let err = b
        .set_param(
            "legs",
            "kp",
            EnvIds::List(&[1, 2]),
            Values::PerEnv(&[1.0, 2.0, 3.0]),
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::ValuesShape {
                got: 3,
                num_envs: 2,
                num_targets: 2,
                ..
            }
        ),
        "{err}"
    );
    // kd is bad: kp must not be written either.
    let err = b
        .set_gains(
            "legs",
            EnvIds::All,
            Some(Values::Scalar(99.0)),
            Some(Values::PerEnv(&[1.0, -1.0, 1.0, 1.0])),
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("`legs`") && err.to_string().contains("damping = -1"),
        "{err}"
    );
    b.read_param("legs", "stiffness", &mut kp).unwrap();
    assert_eq!(kp, [10.0; 8]);
    let err = b
        .set_effort_limit("legs", EnvIds::All, Values::Scalar(f32::NAN))
        .unwrap_err();
    assert!(err.to_string().contains("effort_limit = NaN"), "{err}");
    let err = b
        .set_lags("right", EnvIds::All, Lags::Scalar(1))
        .unwrap_err();
    assert_eq!(
        err,
        Error::NoDelay {
            group: "right".into()
        }
    );
    let err = b
        .set_lags("legs", EnvIds::List(&[0, 1]), Lags::PerEnv(&[1]))
        .unwrap_err();
    assert!(matches!(err, Error::ValuesShape { .. }), "{err}");
    assert_eq!(b.ctrl(), &before[..]);
}

#[test]
fn a_group_without_delay_has_no_lags_to_read() {
    let plan = Plan::new(
        &joints(1),
        vec![pd("g", &[".*"])],
        1,
        PlanOptions::default(),
    )
    .unwrap();
    let mut b = CpuBackend::new(plan);
    assert!(matches!(
        b.read_lags("g", &mut [0]).unwrap_err(),
        Error::NoDelay { .. }
    ));
}

#[test]
fn gpu_backend_refuses_a_plan_larger_than_the_device_binds() {
    let Some(ctx) = crate::support::gpu() else {
        return;
    };
    // 65536 envs × 1025 frames × 3 fields × 29 columns of f32: 23 GB of ring.
    let group = GroupCfg::new("legs", [".*"], IdealPdCfg::new(1.0, 0.0))
        .with_delay(sinew::DelayCfg::new(0, 1024));
    let plan = Plan::new(
        &crate::support::joints(29),
        vec![group],
        65536,
        PlanOptions::default(),
    )
    .unwrap();
    let err = sinew::WgpuBackend::new(&ctx, plan).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(
            err,
            Error::Gpu {
                what: "allocation",
                ..
            }
        ) && msg.contains("delay ring")
            && msg.contains("fewer envs"),
        "{msg}"
    );
}

#[test]
fn parameter_handles_write_like_names_and_refuse_other_plans() {
    let plan = plan(vec![pd("legs", &["FL_.*"]), pd("arms", &["FR_.*"])]).unwrap();
    let kp = plan.param_ref("arms", "kp").unwrap();
    assert_eq!(kp.spec().name, "stiffness");
    let mut b = CpuBackend::new(plan);
    b.set_param_at(kp, EnvIds::List(&[2]), Values::Scalar(7.0))
        .unwrap();
    let mut out = [0.0; 8];
    b.read_param("arms", "stiffness", &mut out).unwrap();
    assert_eq!(out, [10.0, 10.0, 10.0, 10.0, 7.0, 7.0, 10.0, 10.0]);
    // Domains hold through handles too.
    let err = b
        .set_param_at(kp, EnvIds::All, Values::Scalar(-1.0))
        .unwrap_err();
    assert!(matches!(err, Error::InvalidParam { .. }), "{err}");
    // A handle of another plan, where its group has another kind.
    let other = Plan::new(
        &robot(),
        vec![
            pd("x", &["FL_.*"]),
            GroupCfg::new("y", ["FR_.*"], BuiltinMotorCfg::new(3.0)),
        ],
        4,
        PlanOptions::default(),
    )
    .unwrap();
    let mut b = CpuBackend::new(other);
    let err = b
        .set_param_at(kp, EnvIds::All, Values::Scalar(1.0))
        .unwrap_err();
    assert!(matches!(err, Error::ForeignParam { .. }), "{err}");
}
