//! Regression tests for what a hostile or careless user found
//! (`../shared/reference/reliability-findings.md`): each input here once
//! panicked, aborted, hung or gave a silent wrong answer, and now gets a
//! typed error naming the file, line, group, field and value, or the
//! documented result.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};
use sinew::{
    ActuatorCmd, Backend, BuiltinMuscleCfg, CpuBackend, DelayCfg, Error, GroupCfg, IdealPdCfg,
    LearnedMlpCfg, LstmNet, LstmNetCfg, Mlp, NetSpec, Plan, PlanOptions, Robot, Values,
    WgpuBackend,
};
use sinew_cli::run::{self, BackendChoice};
use sinew_cli::verify::{self, Outcome, VerifyOptions};
use sinew_cli::{bench, npy, CliError, Scenario};

use crate::cli::BASE;
use crate::support::{backends, gpu, joints, safetensors};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sinew-reliability-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The scenario error of `text`: its line and message.
fn scenario_error(text: &str) -> (Option<usize>, String) {
    match Scenario::parse(text, "s.toml").expect_err("the scenario is wrong") {
        CliError::Scenario { line, message, .. } => (line, message),
        other => panic!("not a scenario error: {other}"),
    }
}

/// 1-based line of the first line holding `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .expect("needle")
        + 1
}

// ---- Scenario files (F1, F2, Q1–Q3, A1, A2, W2, W6).

#[test]
fn a_toml_error_after_a_greek_letter_names_its_line_and_no_earlier_key() {
    // F1: `key_before` split `τ` mid-character and panicked.
    let text = format!("{BASE}# foot motor: τ_max = 10 N·m\n[[groups]\nname = \"x\"\n");
    let (line, message) = scenario_error(&text);
    assert_eq!(line, Some(line_of(&text, "τ_max") + 1), "{message}");
    assert!(!message.contains("field `"), "{message}");
    // The fuzzer's four bytes.
    let (_, message) = scenario_error("\u{b7}=\r");
    assert!(!message.is_empty());
    // Q2: a bad key names no earlier key.
    let text = BASE.replace("dt = 0.01", "dt = 0.01\nΔt = 0.01");
    let (line, message) = scenario_error(&text);
    assert_eq!(line, Some(line_of(&text, "Δt")));
    assert!(!message.contains("field `steps`"), "{message}");
    let text = BASE.replace("stiffness = 20.0", "stiffness·= 20.0");
    let (_, message) = scenario_error(&text);
    assert!(!message.contains("field `kind`"), "{message}");
}

#[test]
fn an_empty_robot_with_no_groups_runs_with_no_columns() {
    // F2: the command generator chunked rows of zero targets.
    let text = "num_envs = 4\nsteps = 5\ndt = 0.01\ngroups = []\n[robot]\n";
    let scenario = Scenario::parse(text, "s.toml").unwrap();
    let summary = run::run(&scenario, BackendChoice::Cpu, None, None, None, false).unwrap();
    assert_eq!((summary.steps, summary.num_ctrl), (5, 0));
}

#[test]
fn robot_output_and_dt_errors_carry_their_lines() {
    // Q1: errors of the robot table, `targets = []`, `output` and `dt`.
    let text = BASE.replace(
        "joints = [\"hip\", \"knee\", \"ankle\"]",
        "joints = [\"hip\", \"knee\", \"ankle\", \"hip\"]",
    );
    let (line, message) = scenario_error(&text);
    assert_eq!(line, Some(line_of(&text, "joints =")), "{message}");
    assert!(message.contains("hip"), "{message}");

    let text = BASE.replace("targets = [\"ankle\"]", "targets = []");
    let (line, message) = scenario_error(&text);
    assert_eq!(line, Some(line_of(&text, "targets = []")), "{message}");

    let text = format!("{BASE}\n[output]\nevery = 0\n");
    let (line, message) = scenario_error(&text);
    assert_eq!(line, Some(line_of(&text, "[output]")), "{message}");

    let text = format!("{BASE}\n[output]\nenvs = [0, 4]\n");
    let (line, message) = scenario_error(&text);
    assert_eq!(line, Some(line_of(&text, "[output]")), "{message}");
    assert!(message.contains("env 4"), "{message}");

    for dt in ["1e-300", "1e300"] {
        let text = BASE.replace("dt = 0.01", &format!("dt = {dt}"));
        let (line, message) = scenario_error(&text);
        assert_eq!(line, Some(line_of(&text, "dt =")), "{message}");
        assert!(message.contains("`dt`"), "{message}");
    }

    let text = format!("{BASE}\n[robot.joint_actuator_force_ranges]\nknee = [1.0, -1.0]\n");
    let (line, message) = scenario_error(&text);
    assert_eq!(line, Some(line_of(&text, "[robot.joint")), "{message}");
}

#[test]
fn group_names_and_gains_errors_name_what_the_user_wrote() {
    // Q3: a group name that is a path fails at its line, not at write time.
    let text = BASE.replace("name = \"feet\"", "name = \"../../feet\"");
    let (line, message) = scenario_error(&text);
    assert_eq!(line, Some(line_of(&text, "../../feet")), "{message}");
    // Q2: gains that give a negative damping name `gains`.
    let text = BASE.replace(
        "stiffness = 20.0\ndamping = 0.5",
        "armature = 0.01\ngains = { natural_frequency_hz = 10, damping_ratio = -2 }",
    );
    let (line, message) = scenario_error(&text);
    assert_eq!(line, Some(line_of(&text, "gains =")), "{message}");
    assert!(
        message.contains("`gains`") && message.contains("damping"),
        "{message}"
    );
}

#[test]
fn huge_sizes_are_typed_errors_before_any_allocation() {
    // F4, A1: `num_envs` near usize::MAX panicked; 1e9 aborted.
    for num_envs in [usize::MAX, 1 << 40] {
        let err = Plan::new(
            &joints(3),
            vec![GroupCfg::new("g", [".*"], IdealPdCfg::new(1.0, 0.1))],
            num_envs,
            PlanOptions::default(),
        )
        .unwrap_err();
        assert!(
            matches!(&err, Error::TooLarge { field, .. } if field == "num_envs"),
            "{err}"
        );
    }
    let text = BASE.replace("num_envs = 3", "num_envs = 1000000000000");
    let (line, message) = scenario_error(&text);
    assert_eq!(line, Some(1), "{message}");
    assert!(message.contains("num_envs = 1000000000000"), "{message}");
    // A2: history_length 4e9 was expanded into 16 GB of taps first.
    let net = Mlp::load(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/learned/mlp.safetensors"),
        &NetSpec::default(),
    )
    .unwrap();
    let cfg = LearnedMlpCfg::new(net, 1.0, 1.0, 1.0).with_history_length(4_000_000_000);
    let err = Plan::new(
        &joints(1),
        vec![GroupCfg::new("g", [".*"], cfg)],
        1,
        PlanOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, Error::InvalidParam { .. }), "{err}");
    // A4: the bench's 1e12 joint names.
    let err = bench::bench(
        &["cpu"],
        &["pd".into()],
        &[1],
        1_000_000_000_000_000,
        sinew::Dispatches::Auto,
        false,
    )
    .unwrap_err();
    assert!(err.to_string().contains("--targets"), "{err}");
}

#[test]
fn target_regexes_are_checked_alone_and_heavy_ones_are_refused() {
    // W2: `^(?:a)|(?:.*)$` selected every joint.
    let text = BASE.replace("targets = [\"ankle\"]", "targets = [\"ankle)|(?:.*\"]");
    let (line, message) = scenario_error(&text);
    assert_eq!(line, Some(line_of(&text, "ankle)|")), "{message}");
    assert!(
        message.contains("not a valid regular expression"),
        "{message}"
    );
    // A5: hundreds of heavy regexes held gigabytes; each is now capped.
    let heavy: Vec<String> = (0..700)
        .map(|i| format!(r"(?:\w{{120}}|hip|knee)|x{i}"))
        .collect();
    let err = Plan::new(
        &joints(3),
        vec![GroupCfg::new("g", heavy, IdealPdCfg::new(1.0, 0.1))],
        1,
        PlanOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, Error::InvalidRegex { .. }), "{err}");
}

#[test]
fn builtin_muscle_values_out_of_domain_are_errors_without_compute_force() {
    // W6: only compute_force used to check them.
    let bad = [
        BuiltinMuscleCfg {
            fvmax: f32::NAN,
            ..BuiltinMuscleCfg::default()
        },
        BuiltinMuscleCfg {
            fpmax: f32::INFINITY,
            ..BuiltinMuscleCfg::default()
        },
        BuiltinMuscleCfg {
            tausmooth: -1.0,
            ..BuiltinMuscleCfg::default()
        },
        BuiltinMuscleCfg {
            length_range: (f32::NAN, 1.0),
            ..BuiltinMuscleCfg::default()
        },
    ];
    for cfg in bad {
        let err = Plan::new(
            &joints(1),
            vec![GroupCfg::new("m", [".*"], cfg)],
            1,
            PlanOptions::default(),
        )
        .unwrap_err();
        assert!(matches!(err, Error::InvalidParam { .. }), "{cfg:?}: {err}");
    }
    // MuJoCo's defaults, and a length range left to the simulator, stay legal.
    Plan::new(
        &joints(1),
        vec![GroupCfg::new("m", [".*"], BuiltinMuscleCfg::default())],
        1,
        PlanOptions::default(),
    )
    .unwrap();
}

#[test]
fn many_names_and_groups_resolve_in_linear_time() {
    // H2: 60 000 joints and 5000 one-joint groups (quadratic before: 17 s
    // and 9 s). Not timed: it must merely finish with the right plan.
    let robot = joints(60_000);
    let groups: Vec<GroupCfg> = (0..5000)
        .map(|i| {
            GroupCfg::new(
                format!("g{i}"),
                [format!("j{i}")],
                IdealPdCfg::new(1.0, 0.1),
            )
        })
        .chain([GroupCfg::new(
            "rest",
            [r"j\d{4,5}"],
            IdealPdCfg::new(1.0, 0.1),
        )])
        .collect();
    // `rest` also matches j1000..j4999: claimed twice.
    let err = Plan::new(&robot, groups.clone(), 1, PlanOptions::default()).unwrap_err();
    assert!(matches!(err, Error::TargetClaimed { .. }), "{err}");
    let mut groups = groups;
    groups.last_mut().unwrap().targets = vec![r"j([5-9]\d{3}|\d{5})".into()];
    let plan = Plan::new(&robot, groups, 1, PlanOptions::default()).unwrap();
    assert_eq!(plan.num_ctrl(), 60_000);
}

// ---- Files that are not files (H1) and `.npy` shapes (F3).

#[test]
fn device_paths_and_fifos_are_refused_not_read() {
    let dir = temp_dir("fifo");
    let fifo = dir.join("f");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let err = Scenario::load(&fifo).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let err = LstmNet::load(&fifo, &NetSpec::default()).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }
    #[cfg(unix)]
    {
        let err = Mlp::load("/dev/zero", &NetSpec::default()).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let err = npy::read_f32(Path::new("/dev/zero")).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_npy_shape_whose_count_overflows_is_an_error() {
    let dir = temp_dir("npy");
    let path = dir.join("cmd.npy");
    let header =
        b"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4, 3), }\n";
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header);
    std::fs::write(&path, bytes).unwrap();
    let err = npy::read_f32(&path).unwrap_err();
    assert!(err.to_string().contains("too many elements"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- `sinew run` flags and outputs (W7, W8, Q4).

#[test]
fn run_flags_and_outputs_are_checked_and_escaped() {
    let scenario = Scenario::parse(BASE, "s.toml").unwrap();
    for (envs, steps) in [(Some(0), None), (None, Some(0))] {
        let err = run::run(&scenario, BackendChoice::Cpu, envs, steps, None, false).unwrap_err();
        assert!(err.to_string().contains("must be at least 1"), "{err}");
    }
    let dir = temp_dir("out");
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let err = run::run(
        &scenario,
        BackendChoice::Cpu,
        None,
        None,
        Some(&file),
        false,
    )
    .unwrap_err();
    assert!(err.to_string().contains("must name a folder"), "{err}");
    // A target name with a tab and a newline stays in its TSV cell.
    let text = BASE.replace("\"ankle\"", "\"an\\tk\\nle\"");
    let scenario = Scenario::parse(&text, "s.toml").unwrap();
    let out = dir.join("out");
    run::run(&scenario, BackendChoice::Cpu, None, None, Some(&out), false).unwrap();
    let tsv = std::fs::read_to_string(out.join("ctrl_columns.tsv")).unwrap();
    assert_eq!(tsv.lines().count(), 1 + 3, "{tsv}");
    assert!(tsv.contains("an\\tk\\nle"), "{tsv}");
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- `sinew verify` (F5, F6, W3).

fn golden_case() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/mjlab/pd_dc.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut doc = doc;
    doc["cases"].as_array_mut().unwrap().truncate(1);
    doc
}

fn verify_outcome(doc: &Value) -> Result<Outcome, String> {
    let make = |plan| Ok(Box::new(CpuBackend::new(plan)) as Box<dyn Backend>);
    let strict = VerifyOptions {
        mjlab_bit_exact: true,
        ..VerifyOptions::default()
    };
    verify::verify_doc(doc, &make, &strict, 1).map(|r| r.cases[0].1.clone())
}

#[test]
fn verify_fails_what_it_cannot_compare_instead_of_passing_or_panicking() {
    let doc = golden_case();
    assert!(matches!(verify_outcome(&doc), Ok(Outcome::Passed)));
    let failed = |edit: &dyn Fn(&mut Value), why: &str| {
        let mut doc = doc.clone();
        edit(&mut doc);
        match verify_outcome(&doc) {
            Ok(Outcome::Failed(message)) => {
                assert!(message.contains(why), "{why}: {message}")
            }
            other => panic!("{why}: {other:?}"),
        }
    };
    // F5: an expected row longer than the plan.
    failed(
        &|d| {
            let row = d["cases"][0]["steps"][0]["expected"]["ctrl"][0]
                .as_array_mut()
                .unwrap();
            row.extend([json!(0.0), json!(0.0), json!(0.0)]);
        },
        "row 0 has 7 values",
    );
    // F6: an upstream expectation longer than the ctrl buffer.
    failed(
        &|d| {
            let step = &mut d["cases"][0]["steps"][0];
            let mut rows = step["expected"]["ctrl"].clone();
            rows.as_array_mut()
                .unwrap()
                .push(json!([0.0, 0.0, 0.0, 0.0]));
            step["upstream_expected"] = json!({ "ctrl": rows });
        },
        "upstream_expected ctrl has 4 rows",
    );
    // W3: an infinite reference passes nothing.
    failed(
        &|d| d["cases"][0]["steps"][0]["expected"]["ctrl"][0][0] = json!("inf"),
        "mjlab inf",
    );
    // W3: a case with no steps, or with empty expectations, compares nothing.
    failed(
        &|d| d["cases"][0]["steps"] = json!([]),
        "no value was compared",
    );
    failed(
        &|d| {
            for step in d["cases"][0]["steps"].as_array_mut().unwrap() {
                step["expected"]["ctrl"] = json!([]);
            }
        },
        "has 0 rows",
    );
    // W3: ids past 32 bits are errors, not env 1.
    failed(
        &|d| d["cases"][0]["steps"][1]["reset"] = json!([4_294_967_297u64]),
        "does not fit in 32 bits",
    );
    // W3: a file with no cases.
    let mut empty = doc.clone();
    empty["cases"] = json!([]);
    assert!(verify_outcome(&empty).unwrap_err().contains("empty"));
}

// ---- The library API (F7, F8, F9, W4, W5) and the GPU (W1).

#[test]
fn library_accessors_check_their_indices() {
    let plan = Plan::new(
        &joints(2),
        vec![GroupCfg::new("g", [".*"], IdealPdCfg::new(1.0, 0.1)).with_delay(DelayCfg::new(0, 2))],
        3,
        PlanOptions::default(),
    )
    .unwrap();
    let cpu = CpuBackend::new(plan);
    // F8: env 2^32 + 1 passed the check as env 1, then indexed past the end.
    let err = cpu.delay_state("g", (1 << 32) + 1).unwrap_err();
    assert!(matches!(err, Error::EnvOutOfRange { env, .. } if env == (1 << 32) + 1));
    // F9: a documented panic with its reason.
    let caught = std::panic::catch_unwind(|| {
        let mut cmd = ActuatorCmd::zeros(2, 3);
        cmd.row_mut_position_target(2)[0] = 1.0;
    })
    .unwrap_err();
    let message = caught.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("env 2 is out of range"), "{message}");
}

#[test]
fn an_env_zeroed_for_its_output_keeps_its_command_in_the_delay_ring() {
    // W4: the README's rule, on every backend: the finite command sent in a
    // step whose output overflowed is what the delay line holds.
    for (name, make, _) in backends() {
        let plan = Plan::new(
            &Robot::from_joints(["a"]),
            vec![GroupCfg::new("pd", ["a"], IdealPdCfg::new(1.0, 0.0))
                .with_delay(DelayCfg::constant(1))],
            2,
            PlanOptions::default(),
        )
        .unwrap();
        let mut b = make(plan);
        let mut cmd = ActuatorCmd::zeros(2, 1);
        let mut ctrl = [0.0f32; 2];
        let mut step = |b: &mut Box<dyn Backend>, target: f32| {
            cmd.position_target.fill(target);
            b.step(&cmd).unwrap();
            b.read_ctrl(&mut ctrl).unwrap();
            (ctrl, b.nonfinite_envs().unwrap().to_vec())
        };
        step(&mut b, 10.0);
        let env1 = sinew::EnvIds::List(&[1]);
        b.set_param("pd", "stiffness", env1, Values::Scalar(f32::MAX))
            .unwrap();
        let (ctrl, bad) = step(&mut b, 20.0);
        assert_eq!((ctrl[1], bad), (0.0, vec![1]), "[{name}]");
        b.set_param("pd", "stiffness", env1, Values::Scalar(1.0))
            .unwrap();
        let (ctrl, bad) = step(&mut b, 30.0);
        assert_eq!((ctrl, bad), ([20.0, 20.0], vec![]), "[{name}]");
    }
}

/// Torch's LSTM tensors for one layer, hidden `h`, two inputs.
fn lstm_tensors(h: usize) -> Vec<(String, Vec<usize>, Vec<f32>)> {
    let values = |n: usize, seed: f32| -> Vec<f32> {
        (0..n)
            .map(|i| ((i as f32 + seed) * 0.731).sin() * 0.2)
            .collect()
    };
    vec![
        (
            "lstm.weight_ih_l0".into(),
            vec![4 * h, 2],
            values(8 * h, 1.0),
        ),
        (
            "lstm.weight_hh_l0".into(),
            vec![4 * h, h],
            values(4 * h * h, 2.0),
        ),
        ("lstm.bias_ih_l0".into(), vec![4 * h], values(4 * h, 3.0)),
        ("lstm.bias_hh_l0".into(), vec![4 * h], values(4 * h, 4.0)),
        ("head.weight".into(), vec![1, h], values(h, 5.0)),
        ("head.bias".into(), vec![1], vec![0.1]),
    ]
}

/// The tensors as a safetensors file.
fn file_of(tensors: &[(String, Vec<usize>, Vec<f32>)]) -> Vec<u8> {
    let refs: Vec<(&str, &[usize], &[f32])> = tensors
        .iter()
        .map(|(n, s, v)| (n.as_str(), s.as_slice(), v.as_slice()))
        .collect();
    safetensors(&refs, &[])
}

#[test]
fn lstm_tensors_must_have_torchs_shapes() {
    // W5: a transposed weight_hh holds as many values and ran silently.
    let mut tensors = lstm_tensors(8);
    tensors[1].1 = vec![8, 32];
    let err = LstmNet::from_safetensors(&file_of(&tensors), "t", &NetSpec::default()).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidNetwork { tensor, .. } if tensor == "lstm.weight_hh_l0"),
        "{err}"
    );
    let mut tensors = lstm_tensors(8);
    tensors[2].1 = vec![2, 16];
    let err = LstmNet::from_safetensors(&file_of(&tensors), "t", &NetSpec::default()).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidNetwork { tensor, .. } if tensor == "lstm.bias_ih_l0"),
        "{err}"
    );
}

#[test]
fn wide_lstms_agree_on_every_adapter_up_to_the_software_loop_limit() {
    // W1: llvmpipe stops every shader loop after 65 535 iterations; a
    // hidden-128 LSTM needed ~67k per column and came out up to 2 N·m off.
    // Since the law computes four gates per loop iteration it needs ~17k, so
    // it runs on every adapter and must agree with the CPU; an LSTM of three
    // such layers needs ~83k, and a software adapter refuses it.
    let Some(ctx) = gpu() else { return };
    let plan = |net: Arc<LstmNet>| {
        Plan::new(
            &joints(2),
            vec![GroupCfg::new(
                "wide",
                [".*"],
                LstmNetCfg::new(net, 50.0, 50.0, 50.0),
            )],
            3,
            PlanOptions::default(),
        )
        .unwrap()
    };
    let net = LstmNet::from_safetensors(&file_of(&lstm_tensors(128)), "wide", &NetSpec::default())
        .unwrap();
    let wide = plan(Arc::new(net));
    let mut gpu_backend = WgpuBackend::new(&ctx, wide.clone()).unwrap();
    let mut cpu = CpuBackend::new(wide);
    let mut cmd = ActuatorCmd::zeros(3, 2);
    let (mut a, mut b) = ([0.0f32; 6], [0.0f32; 6]);
    for step in 0..5 {
        for (i, x) in cmd.position_target.iter_mut().enumerate() {
            *x = ((step * 6 + i) as f32 * 0.37).sin();
        }
        cpu.step(&cmd).unwrap();
        gpu_backend.step(&cmd).unwrap();
        cpu.read_ctrl(&mut a).unwrap();
        gpu_backend.read_ctrl(&mut b).unwrap();
        for (x, y) in a.iter().zip(&b) {
            approx::assert_relative_eq!(x, y, epsilon = 1e-4, max_relative = 1e-4);
        }
    }
    let deep = plan(crate::learned::drawn_lstm_of(3, 128, 3));
    let learned = deep.learned();
    let iterations =
        sinew_wgpu::learned_loop_iterations(learned, &learned.columns[0], deep.num_state_slots());
    assert!(iterations > sinew_wgpu::SOFTWARE_LOOP_LIMIT, "{iterations}");
    refused_by_software_only(&ctx, WgpuBackend::new(&ctx, deep), "65 535");
}

/// `made` is an error naming `needle` on a software adapter, and a backend
/// on a hardware GPU.
fn refused_by_software_only(
    ctx: &sinew::GpuContext,
    made: Result<WgpuBackend, Error>,
    needle: &str,
) {
    if ctx.is_software() {
        let err = made.unwrap_err();
        assert!(err.to_string().contains(needle), "{err}");
    } else {
        made.unwrap();
    }
}

#[test]
fn encode_step_refuses_one_buffer_as_command_and_ctrl() {
    // F7: it returned Ok, then wgpu panicked at submit.
    let Some(ctx) = gpu() else { return };
    let plan = Plan::new(
        &joints(2),
        vec![GroupCfg::new("g", [".*"], IdealPdCfg::new(1.0, 0.1))],
        2,
        PlanOptions::default(),
    )
    .unwrap();
    let mut backend = WgpuBackend::new(&ctx, plan).unwrap();
    let size = backend.cmd_bytes().max(backend.ctrl_bytes());
    let buffer = || {
        ctx.device().create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        })
    };
    let (both, cmd, out) = (buffer(), buffer(), buffer());
    let mut encoder = ctx.device().create_command_encoder(&Default::default());
    let refused = |err: Error| {
        matches!(
            err,
            Error::Gpu {
                what: "encode_step",
                ..
            }
        )
    };
    assert!(refused(
        backend.encode_step(&mut encoder, &both, &both).unwrap_err()
    ));
    // A destroyed buffer is refused at binding, not by wgpu's panic handler.
    cmd.destroy();
    if let Err(err) = backend.encode_step(&mut encoder, &cmd, &out) {
        assert!(refused(err));
    }
    // Two good buffers still step.
    let fresh = buffer();
    let mut encoder = ctx.device().create_command_encoder(&Default::default());
    backend.encode_step(&mut encoder, &fresh, &out).unwrap();
    ctx.queue().submit([encoder.finish()]);
}

#[test]
fn a_network_that_does_not_fit_its_taps_names_the_network_line() {
    // Q1: the MLP's input width against its taps had no line.
    let text = r#"num_envs = 2
steps = 2
dt = 0.02

[robot]
joints = ["a"]

[[groups]]
name = "go1"
targets = ["a"]
kind = "learned_mlp"
network = "mlp.safetensors"
history_length = 2
effort_limit = 8.0
saturation_effort = 12.0
velocity_limit = 6.0
"#;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/learned");
    let err = Scenario::parse_in(text, "s.toml", &dir).unwrap_err();
    let CliError::Scenario { line, message, .. } = err else {
        panic!("not a scenario error");
    };
    assert_eq!(line, Some(line_of(text, "network =")), "{message}");
    assert!(message.contains("taps"), "{message}");
}

#[test]
fn per_env_kernels_past_the_software_loop_limit_are_refused_there() {
    // W1's cause reaches the per-env kernel too: its output check and
    // zeroing loop over every ctrl column, three iterations each.
    let Some(ctx) = gpu() else { return };
    let plan = Plan::new(
        &joints(22_000),
        vec![GroupCfg::new("g", [".*"], IdealPdCfg::new(1.0, 0.1))],
        2,
        PlanOptions::default(),
    )
    .unwrap();
    assert!(sinew_wgpu::env_loop_iterations(&plan) > sinew_wgpu::SOFTWARE_LOOP_LIMIT);
    refused_by_software_only(&ctx, WgpuBackend::new(&ctx, plan), "per-env kernel");
    // A typical robot stays far below it, behind a 1000-step delay too: a
    // push writes one frame, the first after a reset as well. Such a plan
    // steps there as on the CPU, through a reset.
    let plan = Plan::new(
        &joints(29),
        vec![GroupCfg::new("g", [".*"], IdealPdCfg::new(1.0, 0.1))
            .with_delay(DelayCfg::new(0, 1000))],
        2,
        PlanOptions::default(),
    )
    .unwrap();
    assert!(sinew_wgpu::env_loop_iterations(&plan) < 5_000);
    let mut cpu = CpuBackend::new(plan.clone());
    let mut gpu = WgpuBackend::new(&ctx, plan).unwrap();
    let mut cmd = ActuatorCmd::zeros(2, 29);
    for step in 0..6 {
        cmd.position_target.fill(step as f32);
        if step == 3 {
            for b in [&mut cpu as &mut dyn Backend, &mut gpu] {
                b.reset(sinew::EnvIds::List(&[1])).unwrap();
            }
        }
        let mut ctrl = [vec![0.0f32; 58], vec![0.0f32; 58]];
        for (b, out) in [&mut cpu as &mut dyn Backend, &mut gpu]
            .into_iter()
            .zip(&mut ctrl)
        {
            b.step(&cmd).unwrap();
            b.read_ctrl(out).unwrap();
        }
        assert_eq!(ctrl[0], ctrl[1], "step {step}");
    }
}
