//! Golden files made by the real systems, replayed on every backend through
//! the same verifier as `sinew verify` (`sinew_cli::verify`):
//!
//! - `tests/golden/mjlab/*.json`: episodes of mjlab 1.6.0's own actuator
//!   code. ctrl must match bit for bit on the CPU (the golden text parsed to
//!   f32), within `Tolerance::GPU` on the GPU; lags exactly; mjlab's own test
//!   numbers within their tests' 1e-5. LearnedMlp columns, whose reference
//!   is torch's float32 matrix products summed in torch's order, within
//!   `LEARNED_TOLERANCE` = 1e-5 absolute + relative: `|Δ| ≤ 1e-5·(1 + |mjlab|)`.
//! - `tests/golden/bam/{laws,rollouts}.json`: BAM's own testbench steps,
//!   friction budgets and closed-loop replays of twelve real XL-330 logs
//!   (`data/bam-xl330/`), within `BAM_TOLERANCE` and the rollouts' 1% / 0.5 mrad.
//! - `tests/golden/mimo/*.json`: MIMo's own spring-damper, muscle and
//!   positional models on its 44-actuator body (single muscle updates, curve
//!   sweeps, env-step rollouts), within `MIMO_TOLERANCE`; the positional
//!   file compared through MIMo's documented constraint permutation, which
//!   the report names.
//! - `tests/golden/mujoco-stateful/*.json`: MuJoCo 4.0.0's `<pid>` and
//!   `<dcmotor>`: the 916 cases on joints and fixed tendons within
//!   `MUJOCO_TOLERANCE` plus each value's f32 input sensitivity; shared
//!   force ranges and mixed `<general>` forms skipped.
//! - `tests/golden/mujoco/*.json`: 977 cases of MuJoCo 4.0.0. The tolerance
//!   is the bar's: `|Δ| ≤ 1e-5 · max(1, |MuJoCo|)` on `actuator_force`,
//!   `act_dot`, `act_next` and `qfrc_actuator`, Sinew in f32 against
//!   MuJoCo's f64.

use std::path::PathBuf;

use serde_json::Value;
use sinew::{
    CommandField, DampRatio, InheritRange, MjGeneralCfg, MjMuscleCfg, MjPositionCfg, Plan,
};
use sinew_cli::verify::{
    self, Outcome, Schema, VerifyOptions, BAM_TOLERANCE, LEARNED_TOLERANCE, MIMO_TOLERANCE,
    MUJOCO_TOLERANCE, ROLLOUT_ABSOLUTE, ROLLOUT_RELATIVE,
};

use crate::support::{backends, Tolerance};

const MJLAB_FILES: [&str; 7] = [
    "upstream",
    "semantics",
    "pd_dc",
    "builtin",
    "delay",
    "tendon",
    "learned",
];

const MUJOCO_FILES: [&str; 6] = [
    "shortcuts",
    "general",
    "tendon",
    "muscle",
    "lengthrange",
    "multi",
];

fn golden(schema: &str, file: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(schema)
        .join(format!("{file}.json"));
    let text = std::fs::read_to_string(&path).expect("golden file");
    serde_json::from_str(&text).expect("golden JSON")
}

/// Replays `files` on every backend; returns (passed, failed, skipped) over
/// all of them, printing per-file counts, the worst values and failures.
fn replay(schema: &str, files: &[&str], expect: Schema) -> (usize, usize, Vec<String>) {
    let (mut passed, mut failed, mut skips) = (0, 0, Vec::new());
    for (backend, make, tol) in backends() {
        let make = |plan: Plan| Ok(make(plan));
        let options = VerifyOptions {
            mjlab_bit_exact: tol == Tolerance::EXACT,
            logs_dir: Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/bam-xl330")),
        };
        let (mut compared, mut inexact) = (0, 0);
        for file in files {
            let report = verify::verify_doc(&golden(schema, file), &make, &options, 1)
                .expect("a readable golden file");
            assert_eq!(report.schema, expect);
            let (p, f, s) = report.counts();
            println!(
                "{schema} golden [{backend}] {file}.json: {p} passed, {f} failed, {s} skipped"
            );
            for d in &report.worst {
                println!(
                    "  worst {} {}: sinew {:e}, reference {:e} ({:.3} of the tolerance)",
                    d.case, d.what, d.ours, d.reference, d.ratio
                );
            }
            for (id, outcome) in &report.cases {
                match outcome {
                    Outcome::Failed(why) => println!("  FAILED [{backend}] {id}: {why}"),
                    Outcome::Skipped(why) => skips.push(format!("{id}: {why}")),
                    Outcome::Passed => {}
                }
            }
            (passed, failed) = (passed + p, failed + f);
            (compared, inexact) = (compared + report.compared, inexact + report.inexact);
        }
        println!(
            "{schema} golden [{backend}]: {} of {compared} values bit-equal (as f32) to the reference",
            compared - inexact
        );
    }
    (passed, failed, skips)
}

#[test]
fn mjlab_golden_episodes() {
    let (passed, failed, skips) = replay("mjlab", &MJLAB_FILES, Schema::Mjlab);
    assert_eq!(failed, 0, "mjlab golden cases failed (listed above)");
    assert!(skips.is_empty(), "skipped: {skips:?}");
    assert_eq!(passed, 259 * backends().len());
    assert_eq!(LEARNED_TOLERANCE, 1e-5);
}

#[test]
fn mujoco_golden_cases() {
    let (passed, failed, skips) = replay("mujoco", &MUJOCO_FILES, Schema::Mujoco);
    println!("MuJoCo golden: tolerance {MUJOCO_TOLERANCE} · max(1, |MuJoCo|)");
    assert_eq!(failed, 0, "MuJoCo golden cases failed (listed above)");
    assert!(skips.is_empty(), "skipped: {skips:?}");
    assert_eq!(passed, 977 * backends().len());
}

#[test]
fn bam_golden_laws_and_rollouts() {
    let (passed, failed, skips) = replay("bam", &["laws", "rollouts"], Schema::Bam);
    println!(
        "BAM golden: laws within {BAM_TOLERANCE} · max(1, |BAM|); rollouts' MAE and RMSE within \
         {ROLLOUT_RELATIVE} relative or {ROLLOUT_ABSOLUTE} rad"
    );
    assert_eq!(failed, 0, "BAM golden cases failed (listed above)");
    assert!(skips.is_empty(), "skipped: {skips:?}");
    assert_eq!(passed, (894 + 72) * backends().len());
}

#[test]
fn mujoco_stateful_golden_cases() {
    let files = ["dcmotor", "pid", "general", "tendon", "episodes"];
    let (passed, failed, skips) = replay("mujoco-stateful", &files, Schema::MujocoStateful);
    println!(
        "MuJoCo 4 stateful golden: {MUJOCO_TOLERANCE} · max(1, |MuJoCo|) + f32 input sensitivity"
    );
    assert_eq!(
        failed, 0,
        "MuJoCo stateful golden cases failed (listed above)"
    );
    assert!(skips.is_empty(), "skipped: {skips:?}");
    assert_eq!(passed, 965 * backends().len());
}

#[test]
fn mimo_golden_cases() {
    let files = [
        "muscle_single",
        "muscle_rollout",
        "spring_damper",
        "positional",
    ];
    let (passed, failed, skips) = replay("mimo", &files, Schema::Mimo);
    println!("MIMo golden: within {MIMO_TOLERANCE} · max(1, |MIMo|)");
    assert_eq!(failed, 0, "MIMo golden cases failed (listed above)");
    assert!(skips.is_empty(), "skipped: {skips:?}");
    assert_eq!(passed, 49 * backends().len());
    // The positional file's two swapped hip locks are named, not hidden.
    let make = |plan: Plan| Ok(backends()[0].1(plan));
    let report = verify::verify_doc(
        &golden("mimo", "positional"),
        &make,
        &VerifyOptions::default(),
        1,
    )
    .unwrap();
    assert_eq!(report.notes.len(), 2, "{:?}", report.notes);
    assert!(
        report.notes[0].contains("robot:hip_lean1") && report.notes[0].contains("robot:hip_bend1")
    );
}

// ---- The shortcut constructors compile as MuJoCo's compiler does.

fn nums(v: &Value) -> Vec<f32> {
    v.as_array()
        .expect("numbers")
        .iter()
        .map(|x| x.as_f64().expect("a number") as f32)
        .collect()
}

fn pair(v: &Value) -> [f32; 2] {
    let n = nums(v);
    [n[0], n[1]]
}

/// MuJoCo's autolimits: an explicit `*limited` wins, else limited iff lo < hi.
fn limited(attrs: &Value, kind: &str) -> Option<[f32; 2]> {
    let range = attrs.get(format!("{kind}range")).map(pair);
    match attrs.get(format!("{kind}limited")).and_then(Value::as_str) {
        Some("false") => None,
        Some(_) => range,
        None => range.filter(|r| r[0] < r[1]),
    }
}

/// The Sinew shortcut for a case's MJCF element, from its attributes and
/// what the model holds (reflected inertia, target range, and the compiler
/// outputs lengthrange and acc0).
fn shortcut(spec: &Value, params: &Value) -> Option<MjGeneralCfg> {
    let attrs = &spec["attrs"];
    let trn = &params["transmission"];
    let f = |key: &str, default: f32| {
        attrs
            .get(key)
            .map_or(default, |v| v.as_f64().unwrap() as f32)
    };
    let gear = attrs.get("gear").map_or(1.0, |g| nums(g)[0]);
    let ctrl_range = limited(attrs, "ctrl");
    let force_range = limited(attrs, "force");
    let reflected = || {
        let coef = nums(&trn["coef"]);
        let m0 = nums(&trn["dof_M0"]);
        let s: f64 = coef
            .iter()
            .zip(&m0)
            .map(|(&c, &m)| (f64::from(gear) * f64::from(c)).powi(2) / f64::from(m))
            .sum();
        (1.0 / s) as f32
    };
    let target_range = || {
        if trn["type"] == "tendon" {
            pair(&trn["tendon_range"])
        } else {
            pair(&trn["jnt_range"][0])
        }
    };
    let servo = || MjPositionCfg {
        kp: f("kp", 1.0),
        kv: attrs.get("kv").map(|v| v.as_f64().unwrap() as f32),
        dampratio: attrs.get("dampratio").map(|d| DampRatio {
            ratio: d.as_f64().unwrap() as f32,
            reflected_inertia: reflected(),
        }),
        timeconst: f("timeconst", 0.0),
        inheritrange: attrs.get("inheritrange").map(|s| InheritRange {
            scale: s.as_f64().unwrap() as f32,
            target_range: target_range(),
        }),
        ctrl_range,
        force_range,
        act_range: limited(attrs, "act"),
        gear,
    };
    let cfg = match spec["element"].as_str().unwrap() {
        "motor" => MjGeneralCfg {
            ctrl_range,
            force_range,
            ..MjGeneralCfg::motor().with_gear(gear)
        },
        "position" => servo().position().unwrap(),
        "intvelocity" => servo().intvelocity().unwrap(),
        "velocity" => MjGeneralCfg {
            ctrl_range,
            force_range,
            ..MjGeneralCfg::velocity(f("kv", 1.0)).with_gear(gear)
        },
        "damper" => MjGeneralCfg {
            force_range,
            ..MjGeneralCfg::damper(f("kv", 0.0), ctrl_range.unwrap()).with_gear(gear)
        },
        "cylinder" => {
            let area = match attrs.get("diameter") {
                Some(d) => MjGeneralCfg::cylinder_area(d.as_f64().unwrap() as f32),
                None => f("area", 1.0),
            };
            let bias = attrs.get("bias").map_or([0.0; 3], |b| {
                let b = nums(b);
                [b[0], b[1], b[2]]
            });
            MjGeneralCfg {
                ctrl_range,
                force_range,
                ..MjGeneralCfg::cylinder(f("timeconst", 1.0), area, bias).with_gear(gear)
            }
        }
        "muscle" => {
            let d = MjMuscleCfg::default();
            MjMuscleCfg {
                timeconst: attrs.get("timeconst").map_or(d.timeconst, pair),
                tausmooth: f("tausmooth", d.tausmooth),
                range: attrs.get("range").map_or(d.range, pair),
                force: f("force", d.force),
                scale: f("scale", d.scale),
                lmin: f("lmin", d.lmin),
                lmax: f("lmax", d.lmax),
                vmax: f("vmax", d.vmax),
                fpmax: f("fpmax", d.fpmax),
                fvmax: f("fvmax", d.fvmax),
                length_range: pair(&params["lengthrange"]),
                acc0: params["acc0"].as_f64().unwrap() as f32,
                ctrl_range,
                force_range,
                gear,
            }
            .compile()
            .unwrap()
        }
        "adhesion" => MjGeneralCfg::adhesion(f("gain", 1.0), ctrl_range.unwrap()),
        _ => return None,
    };
    Some(cfg)
}

#[test]
fn mujoco_shortcuts_compile_like_mujoco() {
    let close = |a: f32, b: f32| a == b || (a - b).abs() <= 1e-6 * a.abs().max(b.abs());
    let mut checked = 0;
    for file in ["shortcuts", "tendon", "muscle"] {
        for case in golden("mujoco", file)["cases"].as_array().unwrap() {
            let (spec, params) = (&case["spec"], &case["params"]);
            let Some(ours) = shortcut(spec, params) else {
                continue;
            };
            let mujoco = verify::compiled_general(params).unwrap();
            let id = case["id"].as_str().unwrap();
            let same_arrays = [
                (&ours.dynprm, &mujoco.dynprm),
                (&ours.gainprm, &mujoco.gainprm),
                (&ours.biasprm, &mujoco.biasprm),
            ]
            .iter()
            .all(|(a, b)| a.iter().zip(b.iter()).all(|(&x, &y)| close(x, y)));
            let same_ranges = [
                (ours.ctrl_range, mujoco.ctrl_range),
                (ours.force_range, mujoco.force_range),
                (ours.act_range, mujoco.act_range),
            ]
            .iter()
            .all(|(a, b)| match (a, b) {
                (Some(a), Some(b)) => close(a[0], b[0]) && close(a[1], b[1]),
                (None, None) => true,
                _ => false,
            });
            let same_kinds = (ours.dyn_type, ours.gain_type, ours.bias_type, ours.gear)
                == (
                    mujoco.dyn_type,
                    mujoco.gain_type,
                    mujoco.bias_type,
                    mujoco.gear,
                );
            assert!(
                same_arrays && same_ranges && same_kinds,
                "{id}: the shortcut gives\n{ours:?}\nMuJoCo compiled\n{mujoco:?}"
            );
            let field = match spec["element"].as_str().unwrap() {
                "position" => CommandField::Position,
                "velocity" | "intvelocity" => CommandField::Velocity,
                _ => CommandField::Effort,
            };
            assert_eq!(ours.command_field, field, "{id}");
            checked += 1;
        }
    }
    assert!(checked >= 250, "only {checked} shortcut cases checked");
}
