//! `sinew fit`'s library: BAM's optimizer bounds as data, the batched
//! testbench against one replay per parameter set, and the optimizer
//! recovering parameters from logs Sinew simulated itself.

use std::path::PathBuf;

use sinew::bam::{BamFamily, BAM_MODELS};
use sinew::Plan;
use sinew_cli::fit::{self, FitOptions, Report, Stop};
use sinew_cli::servo::{self, BamParams, LogEntry, ServoLog, Testbench};

use sinew_cli::cmaes::Rng;

use crate::support::backends;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn golden_laws() -> serde_json::Value {
    serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/golden/bam/laws.json")).unwrap(),
    )
    .unwrap()
}

/// A real XL-330 log, its first `entries` entries.
fn log(name: &str, entries: usize) -> ServoLog {
    let mut log = ServoLog::read(&root().join(format!("data/bam-xl330/{name}.json"))).unwrap();
    log.entries.truncate(entries);
    log
}

fn cpu(plan: Plan) -> Result<Box<dyn sinew::Backend>, sinew::Error> {
    Ok(Box::new(sinew::CpuBackend::new(plan)))
}

/// Every family's ranges are the ones BAM built (the golden header records
/// them), and each model fits exactly the parameters BAM's XL-330 files of
/// that model hold.
#[test]
fn bounds_and_fitted_parameters_are_bams() {
    let laws = golden_laws();
    for family in BamFamily::ALL {
        let bam = &laws["actuators"][family.name()];
        let bounds = bam["param_bounds"].as_object().unwrap();
        let ranges = family.param_ranges();
        assert_eq!(ranges.len(), bounds.len(), "{}", family.name());
        for r in ranges {
            let b = &bounds[r.name];
            assert_eq!(
                [r.min, r.max],
                [b[0].as_f64().unwrap(), b[1].as_f64().unwrap()]
            );
            assert_eq!(Some(r.default), bam["param_defaults"][r.name].as_f64());
        }
    }
    for model in BAM_MODELS {
        let fitted: Vec<&str> = BamFamily::Xl330
            .fitted_params(model)
            .unwrap()
            .iter()
            .map(|r| r.name)
            .collect();
        let mut shipped: Vec<&str> = sinew::bam::bam_fit(&format!("xl330/{model}"))
            .unwrap()
            .params
            .iter()
            .map(|p| p.0)
            .collect();
        let mut sorted = fitted.clone();
        sorted.sort_unstable();
        shipped.sort_unstable();
        assert_eq!(sorted, shipped, "{model}");
    }
    assert!(BamFamily::Xl330.fitted_params("m7").is_none());
    let sts: Vec<&str> = BamFamily::Sts3215
        .fitted_params("m1")
        .unwrap()
        .iter()
        .map(|r| r.name)
        .collect();
    assert!(sts.contains(&"error_gain_ratio") && sts.contains(&"max_velocity"));
}

/// One testbench of three parameter sets gives, set by set, what three
/// single replays give, on every backend; a second run repeats the first
/// (state, including the STS3215's smoothed target, is reset).
#[test]
fn a_batched_testbench_equals_one_replay_per_set() {
    let logs = [
        log("2026-01-15_10h28m49", 300),
        log("2026-01-15_10h29m14", 250),
    ];
    for (model, family) in [("m6", BamFamily::Xl330), ("m1", BamFamily::Sts3215)] {
        let base = BamParams::from_fit(
            sinew::bam::bam_fit(&format!("{}/{model}", family.name())).unwrap(),
        );
        let sets: Vec<BamParams> = [1.0, 0.8, 1.25]
            .iter()
            .map(|scale| {
                let mut p = base.clone();
                *p.values.get_mut("kt").unwrap() *= scale;
                p
            })
            .collect();
        for (name, make, _) in backends() {
            let make = |plan: Plan| Ok(make(plan));
            let mut bench = Testbench::new(&logs, family, 3, &make).unwrap();
            let batched = bench.run(&sets).unwrap();
            assert_eq!(
                batched,
                bench.run(&sets).unwrap(),
                "{name}: a rerun repeats"
            );
            assert_eq!(batched.len(), 3 * logs.len());
            for (s, set) in sets.iter().enumerate() {
                let single = servo::replay(&logs, set, &make).unwrap();
                for (l, one) in single.iter().enumerate() {
                    assert_eq!(
                        &batched[s * logs.len() + l],
                        one,
                        "{name} {model} set {s} log {l}"
                    );
                }
            }
            // Fewer sets than the testbench holds.
            assert_eq!(bench.run(&sets[..1]).unwrap()[..], batched[..logs.len()]);
            let e = bench.run(&[
                sets[0].clone(),
                sets[1].clone(),
                sets[2].clone(),
                sets[0].clone(),
            ]);
            assert!(e
                .unwrap_err()
                .contains("4 parameter sets for a testbench of 3"));
        }
    }
}

/// A candidate whose replay goes non-finite gets an infinite loss and says
/// where, without stopping the others.
#[test]
fn a_diverging_candidate_scores_infinity_alone() {
    let logs = [log("2026-01-15_10h28m49", 200)];
    let good = BamParams::from_fit(sinew::bam::bam_fit("xl330/m1").unwrap());
    let mut bad = good.clone();
    bad.values.insert("armature".into(), 1e-30);
    bad.values.insert("kt".into(), 1e30);
    let mut bench = Testbench::new(&logs, BamFamily::Xl330, 2, &cpu).unwrap();
    let r = bench.run(&[bad, good]).unwrap();
    assert!(r[0].diverged_at.is_some(), "{:?}", r[0].diverged_at);
    assert_eq!(fit::batch_loss(&r[..1]), f64::INFINITY);
    assert_eq!(r[1].diverged_at, None);
    assert!(fit::batch_loss(&r[1..]).is_finite());
}

/// Logs simulated by Sinew itself from known XL-330 M1 parameters, plus
/// 1 mrad of Gaussian noise, fitted back from BAM's own starting point:
/// the loss reaches the noise floor (within 10%) and every identifiable
/// quantity lands near the truth (kt/R within 1%, the velocity damping
/// kt²/R + K_v within 2%, the armature within 5%, K_c within 2e-3 N·m,
/// q_offset within 2 mrad), reproducibly from the seed.
#[test]
fn the_fit_recovers_known_parameters() {
    let truth = BamParams {
        family: BamFamily::Xl330,
        model: Some("m1".into()),
        values: [
            ("kt", 0.45),
            ("R", 3.6),
            ("armature", 0.0025),
            ("q_offset", 0.02),
            ("friction_base", 0.015),
            ("friction_viscous", 0.006),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect(),
    };
    let mut logs = vec![
        log("2026-01-15_10h28m10", 400),
        log("2026-01-15_10h28m49", 400),
        log("2026-01-15_10h29m29", 400),
    ];
    let simulated = servo::replay(&logs, &truth, &cpu).unwrap();
    let mut rng = Rng::new(11);
    let mut noise_abs = 0.0;
    for (log, r) in logs.iter_mut().zip(&simulated) {
        for (e, &q) in log.entries.iter_mut().zip(&r.positions) {
            let noise = 1e-3 * rng.normal();
            noise_abs += noise.abs();
            *e = LogEntry {
                position: q + noise,
                ..*e
            };
        }
    }
    let noise_mae = noise_abs / (3.0 * 400.0);
    let start = fit::bam_start(BamFamily::Xl330, "m1").unwrap();
    let mut options = FitOptions::new(BamFamily::Xl330, "m1", start.clone()).unwrap();
    options.budget = 4000;
    options.population = 16;
    options.seed = 3;
    let mut generations = 0;
    let result = fit::fit(&logs, &options, &cpu, &mut |_| generations += 1).unwrap();
    assert_eq!(generations, result.history.len());
    assert!(result.evaluations <= options.budget);
    assert!(matches!(
        result.stop,
        Stop::Budget | Stop::Stalled | Stop::Converged
    ));
    assert!(
        result.loss < 1.1 * noise_mae,
        "loss {} vs noise {noise_mae}",
        result.loss
    );
    let got = |k: &str| result.params.get(k).unwrap();
    let want = |k: &str| truth.get(k).unwrap();
    // The voltage law's torque is (kt/R)·V_duty − (kt²/R)·q̇: only kt/R and
    // the whole velocity-proportional loss kt²/R + K_v are identifiable
    // from position logs, not kt, R and K_v one by one.
    let gain = |p: &dyn Fn(&str) -> f64| p("kt") / p("R");
    let damping = |p: &dyn Fn(&str) -> f64| p("kt") * p("kt") / p("R") + p("friction_viscous");
    approx::assert_relative_eq!(gain(&got), gain(&want), max_relative = 0.01);
    approx::assert_relative_eq!(damping(&got), damping(&want), max_relative = 0.02);
    approx::assert_relative_eq!(got("armature"), want("armature"), max_relative = 0.05);
    approx::assert_abs_diff_eq!(got("friction_base"), want("friction_base"), epsilon = 2e-3);
    approx::assert_abs_diff_eq!(got("q_offset"), want("q_offset"), epsilon = 2e-3);
    // The history only improves, and the same seed gives the same fit.
    assert!(result
        .history
        .windows(2)
        .all(|w| w[1].best_loss <= w[0].best_loss));
    let again = fit::fit(&logs, &options, &cpu, &mut |_| {}).unwrap();
    assert_eq!(again.params, result.params);
    // The report: before is the start, after the fit; a held-out log too.
    let held_out = [log("2026-01-15_10h30m02", 300)];
    let report = Report::new(&logs, &held_out, &start, &result, &cpu).unwrap();
    assert_eq!((report.before.len(), report.after.len()), (4, 4));
    approx::assert_relative_eq!(
        fit::batch_loss(&report.after[..3]),
        result.loss,
        max_relative = 1e-12
    );
    assert!(fit::batch_loss(&report.before[..3]) > 10.0 * result.loss);
    let json = fit::params_json(&result.params);
    assert_eq!(json["model"], "m1");
    assert_eq!(json["actuator"], "xl330");
    let back = BamParams::from_value(&json, None).unwrap();
    assert_eq!(back, result.params);
}

/// A fit file (what `sinew fit` writes) names a scenario group's servo
/// like a shipped fit does, found relative to the scenario; a missing or
/// wrong file is an error naming the group and the field.
#[test]
fn a_fit_file_is_a_scenario_preset() {
    let dir = std::env::temp_dir().join(format!("sinew-fit-preset-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("fits")).unwrap();
    let shipped = BamParams::from_fit(sinew::bam::bam_fit("xl330/m6").unwrap());
    std::fs::write(
        dir.join("fits/mine.json"),
        serde_json::to_string(&fit::params_json(&shipped)).unwrap(),
    )
    .unwrap();
    let scenario = |preset: &str| {
        let text = format!(
            "num_envs = 2\nsteps = 3\ndt = 0.005\n[robot]\njoints = [\"a\"]\n\
             [[groups]]\nname = \"arm\"\ntargets = [\"a\"]\npreset = \"{preset}\"\n"
        );
        sinew_cli::Scenario::parse_in(&text, "fit.toml", &dir)
    };
    let from_file = scenario("fits/mine.json").unwrap();
    let from_fit = scenario("xl330/m6").unwrap();
    assert_eq!(from_file.groups[0].actuator, from_fit.groups[0].actuator);
    assert_eq!(from_file.groups[0].armature, from_fit.groups[0].armature);
    let e = scenario("fits/none.json").unwrap_err().to_string();
    assert!(
        e.contains("group `arm`: field `preset`") && e.contains("none.json"),
        "{e}"
    );
    std::fs::write(dir.join("fits/bad.json"), "{\"kt\": \"x\"}").unwrap();
    let e = scenario("fits/bad.json").unwrap_err().to_string();
    assert!(e.contains("`kt` = \"x\" is not a number"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--init` takes a shipped fit or a file, of the family being fitted only.
#[test]
fn a_starting_point_must_be_of_the_fitted_family() {
    let file = root().join("data/bam-xl330/xl330-m1-params.json");
    let file = file.to_str().unwrap();
    let ok = BamParams::from_preset_or_file(file, Some(BamFamily::Xl330)).unwrap();
    assert_eq!(ok.family, BamFamily::Xl330);
    for spec in [file, "xl330/m6"] {
        let e = BamParams::from_preset_or_file(spec, Some(BamFamily::Mx64)).unwrap_err();
        assert!(e.contains("xl330") && e.contains("mx64"), "{e}");
    }
    let e = BamParams::from_preset_or_file("no/such/fit", None).unwrap_err();
    assert!(e.contains("neither a shipped fit"), "{e}");
}
