//! The `sinew` command's library: scenario errors that name the field and
//! the line, the presets, and runs whose `.npy` files hold exactly what the
//! library's own step returns.

use std::path::PathBuf;

use sinew::{ActuatorCmd, Backend, CpuBackend, Dispatches};
use sinew_cli::command::CommandGen;
use sinew_cli::run::{self, BackendChoice};
use sinew_cli::{bench, npy, presets, CliError, Scenario};

use crate::support::gpu;

/// A valid scenario the error tests edit (`reliability.rs` too).
pub(crate) const BASE: &str = r#"num_envs = 3
steps = 7
dt = 0.01
seed = 5

[robot]
joints = ["hip", "knee", "ankle"]

[[groups]]
name = "legs"
targets = ["hip", "knee"]
kind = "ideal_pd"
stiffness = 20.0
damping = 0.5
effort_limit = 4.0

[[groups]]
name = "feet"
targets = ["ankle"]
kind = "dc_motor"
stiffness = 30.0
damping = 1.0
effort_limit = 10.0
saturation_effort = 12.0
velocity_limit = 8.0
delay = { min_lag = 0, max_lag = 2 }
"#;

/// The line (1-based) of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .expect("needle")
        + 1
}

/// Parses `text` expecting an error at the line holding `needle` whose
/// message contains every piece.
fn expect_error(text: &str, needle: &str, pieces: &[&str]) {
    let err = Scenario::parse(text, "test.toml").expect_err("the scenario is wrong");
    let CliError::Scenario {
        line, ref message, ..
    } = err
    else {
        panic!("not a scenario error: {err}");
    };
    assert_eq!(line, Some(line_of(text, needle)), "{err}");
    for piece in pieces {
        assert!(message.contains(piece), "`{piece}` missing from: {err}");
    }
    assert!(
        err.to_string()
            .starts_with(&format!("test.toml:{}:", line.unwrap())),
        "{err}"
    );
}

#[test]
fn scenario_errors_name_the_field_and_the_line() {
    Scenario::parse(BASE, "test.toml").expect("the base scenario is valid");
    // An unknown field.
    expect_error(
        &BASE.replace("damping = 0.5", "damping = 0.5\nstifness = 3.0"),
        "stifness",
        &["unknown field `stifness`", "stiffness"],
    );
    // A wrong type, in the group it sits in.
    expect_error(
        &BASE.replace("stiffness = 20.0", "stiffness = \"twenty\""),
        "twenty",
        &["group `legs`: field `stiffness`", "invalid type"],
    );
    // A regex that does not compile.
    expect_error(
        &BASE.replace("targets = [\"ankle\"]", "targets = [\"ank(le\"]"),
        "ank(le",
        &["group `feet`", "`ank(le`", "not a valid regular expression"],
    );
    // A regex that matches nothing names the joints there are.
    expect_error(
        &BASE.replace("targets = [\"ankle\"]", "targets = [\"toe\"]"),
        "\"toe\"",
        &[
            "group `feet`",
            "`toe`",
            "matches no joint",
            "hip, knee, ankle",
        ],
    );
    // An impossible lag range.
    expect_error(
        &BASE.replace("min_lag = 0, max_lag = 2", "min_lag = 3, max_lag = 2"),
        "min_lag = 3",
        &[
            "group `feet`",
            "delay.min_lag",
            "min_lag must be <= max_lag",
        ],
    );
    // A value out of its domain.
    expect_error(
        &BASE.replace("saturation_effort = 12.0", "saturation_effort = -12.0"),
        "saturation_effort",
        &["group `feet`", "saturation_effort", "-12"],
    );
    // A field of another kind.
    expect_error(
        &BASE.replace(
            "effort_limit = 4.0",
            "effort_limit = 4.0\nvelocity_limit = 3.0",
        ),
        "velocity_limit = 3.0",
        &[
            "group `legs`",
            "field `velocity_limit` does not apply to kind ideal_pd",
        ],
    );
    // A missing field of the kind.
    let missing = BASE.replace("velocity_limit = 8.0\n", "");
    let err = Scenario::parse(&missing, "test.toml")
        .unwrap_err()
        .to_string();
    assert!(err.contains("needs field `velocity_limit`"), "{err}");
    // A command field that belongs to another source.
    expect_error(
        &format!("{BASE}\n[command]\nsource = \"sine\"\nf0 = 1.0\n"),
        "[command]",
        &["field `f0` does not apply to source Sine"],
    );
}

#[test]
fn wrapped_groups_read_the_native_actuators_of_the_robot_table() {
    let text = r#"num_envs = 2
steps = 3
dt = 0.01

[robot]
joints = ["a", "b"]
tendons = ["cable"]

[[robot.native_actuators]]
name = "a_servo"
target = "a"
gain = "fixed"
bias = "affine"
gainprm = [5.0, 0.0, 0.0]
biasprm = [0.0, -5.0, 0.0]

[[robot.native_actuators]]
name = "cable_motor"
transmission = "tendon"
target = "cable"
gain = "fixed"
bias = "none"

[[groups]]
name = "xml"
targets = ["a"]
kind = "wrapped"

[[groups]]
name = "cables"
targets = ["cable"]
transmission = "tendon"
kind = "wrapped"
command_field = "effort"

[[groups]]
name = "muscle"
targets = ["b"]
kind = "builtin_muscle"
force = 100.0
timeconst = [0.02, 0.05]
"#;
    let scenario = Scenario::parse(text, "wrapped.toml").unwrap();
    let plan = scenario.plan(2).unwrap();
    let meanings: Vec<String> = plan
        .ctrl_columns()
        .iter()
        .map(|c| format!("{}:{:?}", c.target, c.meaning))
        .collect();
    // a: gain 5, bias −5·q: a position servo; the cable's motor takes efforts.
    assert_eq!(
        meanings,
        ["a:PositionTarget", "cable:EffortTarget", "b:EffortTarget"],
        "{meanings:?}"
    );
    let muscle = scenario.groups.iter().find(|g| g.name == "muscle").unwrap();
    assert_eq!(
        muscle.actuator,
        sinew::ActuatorCfg::from(sinew::BuiltinMuscleCfg {
            force: 100.0,
            timeconst: (0.02, 0.05),
            ..Default::default()
        })
    );
    // A group field the kind does not take.
    expect_error(
        &text.replace(
            "command_field = \"effort\"",
            "command_field = \"effort\"\ngear = 2.0",
        ),
        "gear = 2.0",
        &[
            "group `cables`",
            "field `gear` does not apply to kind wrapped",
        ],
    );
}

/// Every scenario the project ships (the presets and `benches/*.toml`)
/// steps to the same efforts on the GPU as on the CPU, as `sinew run
/// --compare` measures them. 1e-3 N·m is `Tolerance::GPU` at the
/// scenarios' largest efforts (about 100 N·m).
#[test]
fn every_shipped_scenario_agrees_between_the_cpu_and_the_gpu() {
    if gpu().is_none() {
        return;
    }
    let benches = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&benches)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "{files:?}");
    let scenarios = (files.iter().map(|f| Scenario::load(f).unwrap())).chain(
        presets::PRESETS
            .iter()
            .map(|p| presets::preset(p.0).unwrap().unwrap()),
    );
    for scenario in scenarios {
        let (_, worst, n) = run::agreement(&scenario, 16, 10).unwrap().unwrap();
        assert!(worst <= 1e-3, "{}: max |Δ| {worst} over {n}", scenario.name);
    }
}

#[test]
fn every_preset_parses_and_matches_its_source() {
    for (name, _, _, _) in presets::PRESETS {
        let scenario = presets::preset(name).unwrap().unwrap();
        for (backend, make, _) in crate::support::backends() {
            let plan = scenario.plan(8).unwrap();
            let mut b = make(plan);
            let command = CommandGen::for_scenario(&scenario, 8, 5).unwrap();
            let mut cmd = ActuatorCmd::zeros(8, b.plan().num_targets());
            for step in 0..5 {
                command.fill_rows(step, 0..8, cmd.fields_mut());
                b.step(&cmd).unwrap();
            }
            assert!(
                b.nonfinite_envs().unwrap().is_empty(),
                "{name} on {backend}"
            );
        }
    }
    // mjlab's G1 constants (g1_constants.py): the armature is the reflected
    // inertia of the two-stage planetary gearbox, kp = a·(2π·10)², kd = 2·2·a·(2π·10).
    let g1 = presets::preset("g1").unwrap().unwrap();
    assert_eq!(g1.robot.joints.len(), 29);
    let w = 2.0 * std::f64::consts::PI * 10.0;
    for (group, armature) in [
        ("5020", 0.003609725),
        ("7520_14", 0.010177520),
        ("7520_22", 0.025101925),
        ("4010", 0.00425),
        ("waist", 2.0 * 0.003609725),
    ] {
        let cfg = g1.groups.iter().find(|g| g.name == group).unwrap();
        let a = f64::from(cfg.armature.unwrap());
        assert!((a - armature).abs() < 1e-9, "{group}: armature {a}");
        let kp = f64::from(cfg.actuator.param_value(0));
        let kd = f64::from(cfg.actuator.param_value(1));
        assert!(
            (kp / (armature * w * w) - 1.0).abs() < 1e-6,
            "{group}: kp {kp}"
        );
        assert!(
            (kd / (4.0 * armature * w) - 1.0).abs() < 1e-6,
            "{group}: kd {kd}"
        );
    }
    // Every G1 joint is claimed once (the plan rejects a joint claimed twice).
    assert_eq!(g1.plan(1).unwrap().num_ctrl(), 29);
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sinew-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn run_writes_npy_files_holding_the_library_step_output() {
    let text = BASE.replace(
        "delay = { min_lag = 0, max_lag = 2 }",
        "delay = { min_lag = 0, max_lag = 2 }\n\n[output]\nlags = true\nevery = 2\nenvs = [2, 0]\n",
    );
    let scenario = Scenario::parse(&text, "test.toml").unwrap();
    let dir = temp_dir("run");
    let summary = run::run(&scenario, BackendChoice::Cpu, None, None, Some(&dir), false).unwrap();
    assert_eq!(
        (summary.steps, summary.num_envs, summary.num_ctrl),
        (7, 3, 3)
    );

    // The reference: the library stepped directly.
    let plan = scenario.plan(3).unwrap();
    let mut cpu = CpuBackend::new(plan.clone());
    let command = CommandGen::for_scenario(&scenario, 3, 7).unwrap();
    let mut cmd = ActuatorCmd::zeros(3, 3);
    let (mut want_ctrl, mut want_lags) = (Vec::new(), Vec::new());
    let mut lags = [0u32; 3];
    for step in 0..7 {
        command.fill_rows(step, 0..3, cmd.fields_mut());
        cpu.step(&cmd).unwrap();
        cpu.read_lags("feet", &mut lags).unwrap();
        if step % 2 == 0 {
            for env in [2usize, 0] {
                want_ctrl.extend_from_slice(&cpu.ctrl()[env * 3..env * 3 + 3]);
                want_lags.push(lags[env] as f32);
            }
        }
    }
    let (shape, ctrl) = npy::read_f32(&dir.join("ctrl.npy")).unwrap();
    assert_eq!(shape, [4, 2, 3]);
    assert_eq!(ctrl, want_ctrl, "ctrl.npy");
    // The first effort by hand: env 2, hip, step 0, a sine of amplitude 0.3
    // at 1 Hz with phase 2π·(2/3 + 0/3); the state trails by 0.02 s = 2
    // steps, so at step 0 it sits at the first sample: the error is 0.
    assert_eq!(ctrl[0], 0.0);
    // Lags come back as u32; read them through their bytes.
    let bytes = std::fs::read(dir.join("lags_feet.npy")).unwrap();
    let header = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let got: Vec<f32> = bytes[10 + header..]
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()) as f32)
        .collect();
    assert_eq!(got, want_lags, "lags_feet.npy");
    let (shape, flags) = npy_u8(&dir.join("nonfinite.npy"));
    assert_eq!((shape, flags), (vec![4, 2], vec![0; 8]));
    let columns = std::fs::read_to_string(dir.join("ctrl_columns.tsv")).unwrap();
    assert!(columns.contains("2\tfeet\tankle"), "{columns}");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn npy_u8(path: &std::path::Path) -> (Vec<usize>, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap();
    let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
    assert!(header.contains("'descr': '|u1'"), "{header}");
    let dims = header
        .split("'shape': (")
        .nth(1)
        .unwrap()
        .split(')')
        .next()
        .unwrap();
    let shape = dims
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().unwrap())
        .collect();
    (shape, bytes[10 + header_len..].to_vec())
}

#[test]
fn an_npy_command_drives_the_targets_and_the_gpu_run_matches_the_cpu_run() {
    let dir = temp_dir("npy");
    std::fs::create_dir_all(&dir).unwrap();
    // (steps, targets): the same targets for every env.
    let targets: Vec<f32> = (0..7 * 3).map(|i| 0.01 * i as f32).collect();
    npy::write(&dir.join("cmd.npy"), &[7, 3], &targets).unwrap();
    let text =
        format!("{BASE}\n[command]\nsource = \"npy\"\npath = \"cmd.npy\"\nstate = \"zero\"\n");
    std::fs::write(dir.join("s.toml"), &text).unwrap();
    let scenario = Scenario::load(&dir.join("s.toml")).unwrap();
    let out = dir.join("cpu");
    run::run(&scenario, BackendChoice::Cpu, None, None, Some(&out), false).unwrap();
    let (_, ctrl) = npy::read_f32(&out.join("ctrl.npy")).unwrap();
    // Step 4, env 1, hip: kp · target (at rest), under the 4 N·m limit.
    let at = (4 * 3 + 1) * 3;
    assert_eq!(ctrl[at], 20.0 * targets[4 * 3]);
    if gpu().is_some() {
        let out = dir.join("gpu");
        run::run(
            &scenario,
            BackendChoice::Wgpu,
            None,
            None,
            Some(&out),
            false,
        )
        .unwrap();
        let (_, gpu_ctrl) = npy::read_f32(&out.join("ctrl.npy")).unwrap();
        let tol = crate::support::Tolerance::GPU;
        for (g, c) in gpu_ctrl.iter().zip(&ctrl) {
            assert!(tol.accepts(*g, *c), "gpu {g}, cpu {c}");
        }
        let (_, worst, n) = run::agreement(&scenario, 3, 7).unwrap().unwrap();
        assert!(worst <= 1e-4 && n == 7 * 9, "{worst} over {n}");
    }
    // A file of the wrong shape is a typed error naming the file.
    npy::write(&dir.join("cmd.npy"), &[7, 4], &[0.0f32; 28]).unwrap();
    let scenario = Scenario::load(&dir.join("s.toml")).unwrap();
    let err = run::run(&scenario, BackendChoice::Cpu, None, None, None, false).unwrap_err();
    assert!(
        matches!(err, CliError::Npy { .. }) && err.to_string().contains("cmd.npy"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bench_reports_every_cell_with_its_bandwidth() {
    let kinds = vec![
        "pd".to_string(),
        "delayed_dc".to_string(),
        "delay_dc".to_string(),
        "learned_lstm".to_string(),
    ];
    let report = bench::bench(&["cpu"], &kinds, &[16, 32], 5, Dispatches::Auto, false).unwrap();
    assert_eq!(report.results.len(), 8);
    assert_eq!(report.bandwidth_gbs.len(), 1);
    for r in &report.results {
        assert!(r.us_per_step > 0.0 && r.percent_of_bandwidth > 0.0, "{r:?}");
        // The single steps' median and 90th percentile, from the same steps.
        assert!(0.0 < r.p50_us && r.p50_us <= r.p90_us, "{r:?}");
        // GPU time is the GPU's alone.
        assert_eq!(r.gpu_us_per_step, None, "{r:?}");
    }
    let table = report.table();
    assert!(!table.contains("GPU µs"), "{table}");
    assert!(table.contains("| delayed_dc | hot | 32 × 5 |"), "{table}");
    assert!(table.contains("| delay_dc | hot | 32 × 5 |"), "{table}");
    // The peer's workload delays every target; mjlab's `delayed_dc` three.
    let (_, groups) = bench::workload_groups("delay_dc", 5)
        .map(|g| ((), g))
        .unwrap();
    assert!(groups.iter().all(|g| g.delay.is_some()));
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["results"][0]["kind"], "pd");
    assert!(json["results"][0]["p90_us"].as_f64().unwrap() > 0.0);
    assert!(table.contains("| µs/step | p50 µs | p90 µs |"), "{table}");
    let err = bench::bench(
        &["cpu"],
        &["pid".to_string()],
        &[16],
        5,
        Dispatches::Auto,
        false,
    )
    .unwrap_err();
    assert!(err.to_string().contains("unknown kind `pid`"), "{err}");
}

#[test]
fn bench_times_a_scenario_hot_and_after_the_callers_work() {
    let go1 = presets::preset("go1").unwrap().unwrap();
    let report = bench::bench_scenario(&go1, &["cpu"], &[8, 16], Dispatches::Auto, false).unwrap();
    let cells: Vec<(&str, usize)> = report
        .results
        .iter()
        .map(|r| (r.mode.as_str(), r.num_envs))
        .collect();
    let modes = ["hot", "after_work", "after_serial", "after_idle"];
    let want: Vec<(&str, usize)> = [8, 16]
        .iter()
        .flat_map(|&n| modes.iter().map(move |&m| (m, n)))
        .collect();
    assert_eq!(cells, want);
    for r in &report.results {
        assert_eq!((r.kind.as_str(), r.num_targets), (go1.name.as_str(), 12));
        assert!(r.us_per_step > 0.0 && r.gbs > 0.0, "{r:?}");
    }
    assert!(report.table().contains("| after_work | 16 × 12 |"));
    assert!(report.table().contains("| after_serial | 8 × 12 |"));
}

const MUJOCO_SCENARIO: &str = r#"num_envs = 2
steps = 3
dt = 0.005

[robot]
joints = ["a", "b", "c"]
tendons = ["t"]
fixed_tendons = [{ name = "t", joints = [["b", 1.0], ["c", -0.5]], actuator_force_range = [-1.0, 1.0] }]
joint_actuator_force_ranges = { a = [-2.0, 2.0] }

[[groups]]
name = "servo"
targets = ["a"]
kind = "mj_general"
command_field = "position"
dyn_type = "filter_exact"
dynprm = [0.02]
gainprm = [30.0]
bias_type = "affine"
biasprm = [0.0, -30.0, -1.0]
ctrl_range = [-1.0, 1.0]

[[groups]]
name = "muscle"
targets = ["b"]
kind = "builtin_muscle"
length_range = [-1.0, 1.0]
acc0 = 2.0
compute_force = true

[[groups]]
name = "cable"
targets = ["t"]
transmission = "tendon"
kind = "mj_general"
gear = 2.0
"#;

#[test]
fn scenarios_declare_mujoco_groups_tendons_and_ranges() {
    let scenario = Scenario::parse(MUJOCO_SCENARIO, "mujoco.toml").unwrap();
    let plan = scenario.plan(2).unwrap();
    let mj = plan.mj();
    assert_eq!(mj.actuators.len(), 3);
    assert_eq!(mj.tendon_limits.len(), 1);
    assert_eq!(mj.joint_limits, vec![(0, [-2.0, 2.0])]);
    // The tendon's path: b and c with their coefficients.
    let cable = &mj.actuators[2];
    assert_eq!(
        mj.path_of(cable)
            .iter()
            .map(|e| (e.column, e.coef))
            .collect::<Vec<_>>(),
        [(1, 1.0), (2, -0.5)]
    );
    let summary = run::run(&scenario, BackendChoice::Cpu, None, None, None, false).unwrap();
    assert_eq!(summary.nonfinite_envs, 0);
    // A field of another kind, and a range MuJoCo rejects, point at their line.
    let wrong = MUJOCO_SCENARIO.replace("gear = 2.0", "gear = 2.0\nstiffness = 3.0");
    expect_error(&wrong, "stiffness = 3.0", &["stiffness", "mj_general"]);
    let wrong = MUJOCO_SCENARIO.replace("ctrl_range = [-1.0, 1.0]", "ctrl_range = [1.0, -1.0]");
    expect_error(&wrong, "ctrl_range = [1.0", &["ctrl_range", "lo < hi"]);
}

#[test]
fn verify_counts_passes_failures_and_skips() {
    use sinew_cli::verify::{self, Outcome, VerifyOptions};
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/mujoco/multi.json"),
    )
    .unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let cases = doc["cases"].as_array_mut().unwrap();
    cases.truncate(3);
    // Case 1 gets a wrong reference force, case 2 a dynamics Sinew does not model.
    cases[1]["outputs"]["actuator_force"][0] = serde_json::json!(123.0);
    cases[2]["params"][0]["dyntype"] = serde_json::json!("dcmotor");
    let make = |plan| Ok(Box::new(CpuBackend::new(plan)) as Box<dyn Backend>);
    let strict = VerifyOptions {
        mjlab_bit_exact: true,
        ..VerifyOptions::default()
    };
    let report = verify::verify_doc(&doc, &make, &strict, 2).unwrap();
    assert_eq!(report.counts(), (1, 1, 1));
    assert!(
        matches!(&report.cases[1].1, Outcome::Failed(why) if why.contains("actuator_force[0]"))
    );
    assert!(matches!(&report.cases[2].1, Outcome::Skipped(why) if why.contains("dcmotor")));
    assert_eq!(report.worst[0].reference, 123.0);
    let err =
        verify::verify_doc(&serde_json::json!({"schema": "x"}), &make, &strict, 1).unwrap_err();
    assert!(err.contains("unknown schema"), "{err}");
}

#[test]
fn verify_passes_a_v1_value_only_within_its_f32_input_sensitivity() {
    use sinew_cli::verify::{self, Outcome, VerifyOptions};
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/mujoco/general.json"),
    )
    .unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let cases = doc["cases"].as_array_mut().unwrap();
    let mut case = cases
        .iter()
        .find(|c| c["id"] == "general/g_fixed_none_none_plain/s0")
        .unwrap()
        .clone();
    // A stiff position servo far from the origin: f = 1e4·ctrl − 1e4·qpos
    // with ctrl = 1000.00015 and qpos = 1000, 1.5 in f64. ctrl rounds to
    // f32 1000.000122 (an ulp there is 6.1e-5), so Sinew gives 1: off by
    // 0.5 = 5e4 tolerances, all of it the rounding of its own input.
    case["params"]["biastype"] = serde_json::json!("affine");
    case["params"]["gainprm"][0] = serde_json::json!(1e4);
    case["params"]["biasprm"][1] = serde_json::json!(-1e4);
    case["inputs"]["ctrl"] = serde_json::json!(1000.00015);
    case["inputs"]["qpos"] = serde_json::json!([1000.0]);
    let exact = 1e4 * 1000.00015 - 1e4 * 1000.0;
    case["outputs"]["actuator_force"] = serde_json::json!(exact);
    case["outputs"]["qfrc_actuator"] = serde_json::json!([exact]);
    let mut far = case.clone();
    far["id"] = serde_json::json!("far");
    far["outputs"]["actuator_force"] = serde_json::json!(exact + 10.0);
    *cases = vec![case, far];
    let make = |plan| Ok(Box::new(CpuBackend::new(plan)) as Box<dyn Backend>);
    let report = verify::verify_doc(&doc, &make, &VerifyOptions::default(), 4).unwrap();
    assert_eq!(report.counts(), (1, 1, 0), "{:?}", report.cases);
    assert!(
        matches!(&report.cases[1].1, Outcome::Failed(why)
            if why.contains("actuator_force[0] (f32 input sensitivity")),
        "{:?}",
        report.cases[1]
    );
    // The passing case was off by more than the tolerance, and says why.
    let passed = report.worst.iter().find(|d| d.case != "far").unwrap();
    assert!(
        passed.what.contains("f32 input sensitivity")
            && (passed.ours - passed.reference).abs() > 1e-2
            && passed.ratio <= 1.0,
        "{passed:?}"
    );
}

const LEARNED_SCENARIO: &str = r#"num_envs = 3
steps = 4
dt = 0.02

[robot]
joints = ["a", "b", "c"]

[[groups]]
name = "go1"
targets = ["a", "b"]
kind = "learned_mlp"
network = "mlp.safetensors"
taps = [0, 2, 4]
history_init = "zeros"
pos_scale = -1.0
vel_scale = 0.2
torque_scale = 5.0
effort_limit = 8.0
saturation_effort = 12.0
velocity_limit = 6.0
delay = { max_lag = 1 }

[[groups]]
name = "sea"
targets = ["c"]
kind = "lstm_net"
network = "lstm.safetensors"
effort_limit = 8.0
saturation_effort = 12.0
velocity_limit = 6.0
"#;

#[test]
fn scenarios_load_learned_networks_beside_them() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/learned");
    let scenario = Scenario::parse_in(LEARNED_SCENARIO, "learned.toml", &dir).unwrap();
    let plan = scenario.plan(3).unwrap();
    assert_eq!(
        plan.groups()
            .iter()
            .map(|g| g.cfg.actuator.kind_name())
            .collect::<Vec<_>>(),
        ["LearnedMlp", "LstmNet"]
    );
    let mut cpu = CpuBackend::new(plan);
    let mut cmd = ActuatorCmd::zeros(3, 3);
    cmd.position_target.fill(0.3);
    cpu.step(&cmd).unwrap();
    assert!(cpu.ctrl().iter().all(|v| v.is_finite() && *v != 0.0));

    // A bad file or a wrong activation names the group, the tensor and the line.
    let broken = LEARNED_SCENARIO.replace("\"mlp.safetensors\"", "\"lstm.safetensors\"");
    let err = Scenario::parse_in(&broken, "learned.toml", &dir)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(&format!(
            "learned.toml:{}:",
            line_of(LEARNED_SCENARIO, "mlp.safetensors")
        )) && err.contains("group `go1`")
            && err.contains("tensor `"),
        "{err}"
    );
    let unknown = LEARNED_SCENARIO.replace(
        "kind = \"lstm_net\"",
        "kind = \"lstm_net\"\nactivations = [\"gelu\"]",
    );
    let err = Scenario::parse_in(&unknown, "learned.toml", &dir)
        .unwrap_err()
        .to_string();
    assert!(err.contains("activations") && err.contains("gelu"), "{err}");
    let both = LEARNED_SCENARIO.replace("taps = [0, 2, 4]", "taps = [0, 2, 4]\nhistory_length = 2");
    let err = Scenario::parse_in(&both, "learned.toml", &dir)
        .unwrap_err()
        .to_string();
    assert!(err.contains("not both"), "{err}");
}

/// A kind the reader has no code for is read from the group's own keys
/// through its `Kind::from_fields` (RemotizedPD here): the run gives what
/// the library gives, and its errors name the field and the line.
#[test]
fn kinds_without_reader_code_are_read_from_their_fields() {
    let text = r#"num_envs = 2
steps = 3
dt = 0.02

[robot]
joints = ["hip", "knee"]

[[groups]]
name = "knee"
targets = ["knee"]
kind = "remotized_pd"
stiffness = 60.0
damping = 1.5
lookup = [[-1.0, 1.0, 20.0], [0.0, 1.0, 45.0], [0.8, 1.0, 30.0]]
delay = { max_lag = 1 }

[[groups]]
name = "hip"
targets = ["hip"]
kind = "ideal_pd"
stiffness = 20.0
damping = 0.5
"#;
    let scenario = Scenario::parse(text, "test.toml").unwrap();
    let knee = &scenario.groups[0];
    assert_eq!(
        knee.actuator,
        sinew::RemotizedPdCfg::new(
            60.0,
            1.5,
            [[-1.0, 1.0, 20.0], [0.0, 1.0, 45.0], [0.8, 1.0, 30.0]]
        )
        .into()
    );
    assert_eq!(knee.delay.as_ref().map(|d| d.max_lag), Some(1));
    run::run(&scenario, BackendChoice::Cpu, None, None, None, false).unwrap();
    // A field the kind does not take, one out of its domain, a missing one.
    expect_error(
        &text.replace("damping = 1.5", "damping = 1.5\ngear = 2.0"),
        "[[groups]]",
        &["group `knee`", "remotized_pd", "unknown field `gear`"],
    );
    expect_error(
        &text.replace("stiffness = 60.0", "stiffness = -60.0"),
        "stiffness = -60.0",
        &["group `knee`", "stiffness", "-60"],
    );
    let err = Scenario::parse(&text.replace("damping = 1.5\n", ""), "test.toml").unwrap_err();
    assert!(err.to_string().contains("missing field `damping`"), "{err}");
    // An unknown kind lists the registered ones.
    expect_error(
        &text.replace("\"remotized_pd\"", "\"remotised_pd\""),
        "remotised_pd",
        &["unknown kind `remotised_pd`", "remotized_pd", "dc_motor"],
    );
    // A field no kind has, in a kind the reader knows.
    expect_error(
        &text.replace("damping = 0.5", "damping = 0.5\nlookup = []"),
        "lookup = []",
        &["group `hip`", "unknown field `lookup`"],
    );
}

#[test]
fn field_lines_are_found_after_multi_line_arrays() {
    let text = r#"num_envs = 2
steps = 3
dt = 0.02

[robot]
joints = ["knee"]

[[groups]]
name = "knee"
targets = ["knee"]
kind = "remotized_pd"
lookup = [
    [-1.0, 1.0, 20.0],
    [0.8, 1.0, 30.0],
]
damping = 1.5
stiffness = -60.0
"#;
    expect_error(text, "stiffness = -60.0", &["group `knee`", "stiffness"]);
}
