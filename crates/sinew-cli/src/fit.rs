//! `sinew fit`: servo parameters identified from recorded logs, a whole
//! population of candidates replayed at once.
//!
//! Every generation of the optimizer ([`crate::cmaes`]) is one batched
//! replay on BAM's pendulum testbench ([`Testbench`]): population × logs
//! envs stepped together, env `k·logs + l` replaying log `l` with candidate
//! `k`. A candidate's loss is BAM's (`fit.py`'s `compute_score` over its
//! log batch): the mean absolute position error over every entry of every
//! log. The parameters searched are the ones BAM's optimizer fits for the
//! family and friction model ([`BamFamily::fitted_params`]), within BAM's
//! bounds, searched linearly as BAM's `suggest_float(name, min, max)`
//! does; each is mapped onto `[0, 1]` for the strategy. The per-log
//! settings BAM takes from the log (kp, vin, the pendulum's mass and
//! length) come from each log and are never fitted.

use std::time::Instant;

use serde_json::{json, Map, Value};
use sinew::bam::{BamFamily, BamParamRange};

use crate::cmaes::Cmaes;
use crate::servo::{BamParams, Rollout, ServoLog, Testbench};
use crate::verify::MakeBackend;

/// What to fit and how hard to try.
#[derive(Debug, Clone)]
pub struct FitOptions {
    /// The actuator family.
    pub family: BamFamily,
    /// The friction model, `m1` … `m6`.
    pub model: String,
    /// The starting point: a shipped fit, a parameter file or BAM's own
    /// starting values. Parameters the model does not fit are not kept.
    pub init: BamParams,
    /// The most loss evaluations (one evaluation: one candidate over every
    /// fitted log).
    pub budget: usize,
    /// Candidates per generation.
    pub population: usize,
    /// The initial step size, as a share of each parameter's range.
    pub sigma: f64,
    /// The seed: the same seed, logs and options give the same fit.
    pub seed: u64,
    /// Stop when the best loss has not improved by more than
    /// `tolerance × best` for this many generations.
    pub patience: usize,
    /// The relative improvement that counts (see `patience`).
    pub tolerance: f64,
}

impl FitOptions {
    /// Defaults for `family` and `model` from `init`: a budget of 20 000
    /// evaluations, 32 candidates per generation (at least the tutorial's
    /// `4 + ⌊3 ln n⌋`), σ = 0.2, seed 0, patience 60 generations at a
    /// relative tolerance of 1e-4.
    pub fn new(family: BamFamily, model: &str, init: BamParams) -> Result<FitOptions, String> {
        let n = family
            .fitted_params(model)
            .ok_or_else(|| format!("unknown model `{model}`: BAM's models are m1 … m6"))?
            .len();
        Ok(FitOptions {
            family,
            model: model.to_owned(),
            init,
            budget: 20_000,
            population: Cmaes::default_population(n).max(32),
            sigma: 0.2,
            seed: 0,
            patience: 60,
            tolerance: 1e-4,
        })
    }
}

/// Why a fit stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The evaluation budget is spent.
    Budget,
    /// The best loss stopped improving (see [`FitOptions::patience`]).
    Stalled,
    /// The candidates all lie within 1e-9 of each range of one another.
    Converged,
}

impl Stop {
    /// A word for reports.
    pub fn name(self) -> &'static str {
        match self {
            Stop::Budget => "budget",
            Stop::Stalled => "stalled",
            Stop::Converged => "converged",
        }
    }
}

/// One generation's progress.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Generations so far (1-based).
    pub generation: usize,
    /// Loss evaluations so far.
    pub evaluations: usize,
    /// The best loss so far (rad).
    pub best_loss: f64,
    /// The best loss of this generation (rad).
    pub generation_best: f64,
    /// The step size after this generation.
    pub sigma: f64,
}

/// A finished fit.
#[derive(Debug, Clone)]
pub struct Fit {
    /// The best parameters found, in BAM's layout.
    pub params: BamParams,
    /// Their loss on the fitted logs (rad).
    pub loss: f64,
    /// Every generation's progress.
    pub history: Vec<Progress>,
    /// Loss evaluations spent.
    pub evaluations: usize,
    /// Why it stopped.
    pub stop: Stop,
    /// Wall time of the search (s).
    pub seconds: f64,
}

/// BAM's loss: the mean absolute error over every entry of every rollout.
pub fn batch_loss(rollouts: &[Rollout]) -> f64 {
    let entries: usize = rollouts.iter().map(|r| r.positions.len()).sum();
    let total: f64 = rollouts
        .iter()
        .map(|r| r.mae * r.positions.len() as f64)
        .sum();
    if total.is_nan() {
        f64::INFINITY
    } else {
        total / entries.max(1) as f64
    }
}

/// The parameters of one point of the unit box: each fitted parameter at
/// its place in its range, in BAM's layout.
fn params_at(family: BamFamily, model: &str, ranges: &[BamParamRange], u: &[f64]) -> BamParams {
    BamParams {
        family,
        model: Some(model.to_owned()),
        values: ranges
            .iter()
            .zip(u)
            .map(|(r, &u)| (r.name.to_owned(), r.min + u * (r.max - r.min)))
            .collect(),
    }
}

/// BAM's own starting point for `model` of `family`: each parameter the
/// model fits at BAM's starting value.
pub fn bam_start(family: BamFamily, model: &str) -> Result<BamParams, String> {
    let ranges = family
        .fitted_params(model)
        .ok_or_else(|| format!("unknown model `{model}`: BAM's models are m1 … m6"))?;
    Ok(BamParams {
        family,
        model: Some(model.to_owned()),
        values: ranges
            .iter()
            .map(|r| (r.name.to_owned(), r.default))
            .collect(),
    })
}

/// Fits `options.model` of `options.family` to `logs`, calling `progress`
/// after every generation.
pub fn fit(
    logs: &[ServoLog],
    options: &FitOptions,
    make: MakeBackend<'_>,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Fit, String> {
    let started = Instant::now();
    let (family, model) = (options.family, options.model.as_str());
    if options.init.family != family {
        return Err(format!(
            "the starting parameters are for {}, the fit for {}",
            options.init.family.name(),
            family.name()
        ));
    }
    let ranges = family
        .fitted_params(model)
        .ok_or_else(|| format!("unknown model `{model}`: BAM's models are m1 … m6"))?;
    let start: Vec<f64> = ranges
        .iter()
        .map(|r| {
            let v = options.init.get(r.name).unwrap_or(r.default);
            ((v - r.min) / (r.max - r.min)).clamp(0.0, 1.0)
        })
        .collect();
    let population = options.population.max(2);
    let mut es = Cmaes::new(start.clone(), options.sigma, population, options.seed);
    let mut bench = Testbench::new(logs, family, population, make)?;
    let mut best = (f64::INFINITY, start);
    let (mut history, mut evaluations) = (Vec::new(), 0);
    let mut last_gain = 0;
    let stop = loop {
        if evaluations + population > options.budget.max(population) {
            break Stop::Budget;
        }
        let generation = es.ask();
        let candidates: Vec<BamParams> = generation
            .candidates
            .iter()
            .map(|u| params_at(family, model, &ranges, u))
            .collect();
        let rollouts = bench.run(&candidates)?;
        let losses: Vec<f64> = rollouts.chunks(logs.len()).map(batch_loss).collect();
        evaluations += population;
        let (k, &gen_best) = losses
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1))
            .expect("a population of at least 2");
        if gen_best < best.0 {
            if gen_best < best.0 * (1.0 - options.tolerance) {
                last_gain = history.len();
            }
            best = (gen_best, generation.candidates[k].clone());
        }
        es.tell(&generation, &losses);
        let step = Progress {
            generation: history.len() + 1,
            evaluations,
            best_loss: best.0,
            generation_best: gen_best,
            sigma: es.sigma(),
        };
        progress(&step);
        history.push(step);
        if history.len() - last_gain > options.patience {
            break Stop::Stalled;
        }
        if es.spread() < 1e-9 {
            break Stop::Converged;
        }
    };
    Ok(Fit {
        params: params_at(family, model, &ranges, &best.1),
        loss: best.0,
        history,
        evaluations,
        stop,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The parameters in BAM's parameter-file layout (`bam/params/<motor>/m<k>.json`):
/// each parameter by name, then `model` and `actuator`.
pub fn params_json(params: &BamParams) -> Value {
    let mut map: Map<String, Value> = params
        .values
        .iter()
        .map(|(k, &v)| (k.clone(), json!(v)))
        .collect();
    if let Some(model) = &params.model {
        map.insert("model".into(), json!(model));
    }
    map.insert("actuator".into(), json!(params.family.name()));
    Value::Object(map)
}

/// A loss curve: the best loss (mrad) against the evaluations spent.
pub fn loss_curve_svg(history: &[Progress], title: &str) -> String {
    use crate::svg::{line_plot, Series};
    let point = |p: &Progress, v: f64| (p.evaluations as f64, 1e3 * v);
    let series = [
        Series {
            name: "generation best",
            color: "#bbbbbb",
            points: history
                .iter()
                .map(|p| point(p, p.generation_best))
                .collect(),
        },
        Series {
            name: "best so far",
            color: "#d62728",
            points: history.iter().map(|p| point(p, p.best_loss)).collect(),
        },
    ];
    line_plot(title, "evaluations", "mean absolute error (mrad)", &series)
}

/// Every log's errors before (the starting parameters) and after a fit,
/// the fitted logs first, then the held-out ones.
#[derive(Debug, Clone)]
pub struct Report {
    logs: Vec<ServoLog>,
    fitted: usize,
    /// Per log, with the starting parameters.
    pub before: Vec<Rollout>,
    /// Per log, with the fitted parameters.
    pub after: Vec<Rollout>,
}

/// Mean MAE and mean RMSE (rad) of some rollouts.
pub fn means(rollouts: &[Rollout]) -> (f64, f64) {
    let n = rollouts.len().max(1) as f64;
    (
        rollouts.iter().map(|r| r.mae).sum::<f64>() / n,
        rollouts.iter().map(|r| r.rmse).sum::<f64>() / n,
    )
}

impl Report {
    /// Replays `logs` and `held_out` with `before` and with the fit's
    /// parameters, on one testbench.
    pub fn new(
        logs: &[ServoLog],
        held_out: &[ServoLog],
        before: &BamParams,
        fit: &Fit,
        make: MakeBackend<'_>,
    ) -> Result<Report, String> {
        let all: Vec<ServoLog> = logs.iter().chain(held_out).cloned().collect();
        let mut bench = Testbench::new(&all, fit.params.family, 2, make)?;
        let mut rollouts = bench.run(&[before.clone(), fit.params.clone()])?;
        let after = rollouts.split_off(all.len());
        Ok(Report {
            logs: all,
            fitted: logs.len(),
            before: rollouts,
            after,
        })
    }

    /// `(name, held out, log, before, after)` per log.
    fn rows<'a>(
        &'a self,
        paths: &'a [std::path::PathBuf],
        validate: &'a [std::path::PathBuf],
    ) -> impl Iterator<
        Item = (
            &'a std::path::Path,
            bool,
            &'a ServoLog,
            &'a Rollout,
            &'a Rollout,
        ),
    > + 'a {
        paths
            .iter()
            .chain(validate)
            .zip(&self.logs)
            .zip(self.before.iter().zip(&self.after))
            .enumerate()
            .map(|(k, ((path, log), (b, a)))| (path.as_path(), k >= self.fitted, log, b, a))
    }

    /// Prints per-log MAE and RMSE (mrad) before and after, and the means
    /// of the fitted and the held-out logs.
    pub fn print(&self, paths: &[std::path::PathBuf], validate: &[std::path::PathBuf]) {
        println!(
            "{:28} {:>9} {:>11} {:>11} {:>12} {:>12}",
            "log", "split", "MAE before", "MAE after", "RMSE before", "RMSE after"
        );
        for (path, held, _, b, a) in self.rows(paths, validate) {
            let name = path.file_stem().unwrap_or_default().to_string_lossy();
            println!(
                "{name:28} {:>9} {:>11.1} {:>11.1} {:>12.1} {:>12.1}",
                if held { "held out" } else { "fitted" },
                1e3 * b.mae,
                1e3 * a.mae,
                1e3 * b.rmse,
                1e3 * a.rmse
            );
        }
        for (label, range) in [
            ("mean, fitted", 0..self.fitted),
            ("mean, held out", self.fitted..self.logs.len()),
        ] {
            if range.is_empty() {
                continue;
            }
            let (b, a) = (
                means(&self.before[range.clone()]),
                means(&self.after[range]),
            );
            println!(
                "{label:38} {:>11.1} {:>11.1} {:>12.1} {:>12.1}",
                1e3 * b.0,
                1e3 * a.0,
                1e3 * b.1,
                1e3 * a.1
            );
        }
    }

    /// The log with the largest RMSE after the fit.
    pub fn worst<'a>(
        &'a self,
        paths: &'a [std::path::PathBuf],
        validate: &'a [std::path::PathBuf],
    ) -> (&'a std::path::Path, &'a ServoLog, &'a Rollout) {
        let (path, _, log, _, after) = self
            .rows(paths, validate)
            .max_by(|x, y| x.4.rmse.total_cmp(&y.4.rmse))
            .expect("at least one log");
        (path, log, after)
    }

    /// The report as JSON: the options, the fitted parameters, the loss
    /// history, per-log errors before and after, and their means.
    pub fn json(
        &self,
        paths: &[std::path::PathBuf],
        validate: &[std::path::PathBuf],
        options: &FitOptions,
        fit: &Fit,
        backend: &str,
    ) -> Value {
        let errors =
            |r: &Rollout| json!({"mae": r.mae, "rmse": r.rmse, "max_abs_error": r.max_abs_error});
        let logs: Vec<Value> = self
            .rows(paths, validate)
            .map(|(path, held, _, b, a)| {
                json!({
                    "log": path.display().to_string(),
                    "split": if held { "held_out" } else { "fitted" },
                    "before": errors(b),
                    "after": errors(a),
                })
            })
            .collect();
        let summary = |range: std::ops::Range<usize>| {
            let (b, a) = (
                means(&self.before[range.clone()]),
                means(&self.after[range]),
            );
            json!({
                "before": {"mean_mae": b.0, "mean_rmse": b.1},
                "after": {"mean_mae": a.0, "mean_rmse": a.1},
            })
        };
        json!({
            "schema": "sinew-fit-report/v1",
            "units": "rad",
            "actuator": options.family.name(),
            "model": options.model,
            "backend": backend,
            "seed": options.seed,
            "budget": options.budget,
            "population": options.population,
            "sigma": options.sigma,
            "init": params_json(&options.init),
            "fitted": params_json(&fit.params),
            "loss": fit.loss,
            "evaluations": fit.evaluations,
            "seconds": fit.seconds,
            "evaluations_per_second": fit.evaluations as f64 / fit.seconds,
            "stop": fit.stop.name(),
            "history": fit.history.iter().map(|p| json!({
                "generation": p.generation,
                "evaluations": p.evaluations,
                "best_loss": p.best_loss,
                "generation_best": p.generation_best,
                "sigma": p.sigma,
            })).collect::<Vec<_>>(),
            "logs": logs,
            "summary": {
                "fitted": summary(0..self.fitted),
                "held_out": summary(self.fitted..self.logs.len()),
            },
        })
    }
}
