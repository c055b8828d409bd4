//! Whether a small step runs faster on the calling thread alone or in one
//! part per thread, found by timing both now and then
//! ([`crate::CpuBackend::parts`]).
//!
//! Neither is faster everywhere: it depends on where the caller's own work
//! between two steps left the command's rows. Written on the step's own
//! split ([`crate::CpuBackend::par_rows_mut`]), each thread finds its rows
//! in its cache and the parts win (PD at 1024 × 12 on 2 cores: 2.8–2.9 µs,
//! against 3.3–3.4 on one thread). Written by the calling thread alone
//! (numpy from Python, a simulator on one thread), the other thread would
//! read its half from the caller's cache, and the caller alone wins (the
//! same step: 3.6 µs with these trials, 7.1–7.6 always in two parts;
//! BENCHMARKS.md).

/// Steps of each way in a trial: the median of each is compared, so a
/// step slowed by the host, or one that moves rows between caches as the
/// way changes, does not decide.
const TRIAL: usize = 8;

/// The fewest steps between two trials, of those that could run either
/// way: after a trial that changed the choice (the host may have slowed
/// one core for a while), and before the first.
const MIN_PERIOD: u32 = 32;

/// The most steps between two trials: the period doubles after each trial
/// that keeps the choice, up to this. A trial costs more than its slower
/// half: steps in parts right after steps alone run slower for a while.
/// With trials at most 1024 steps apart, criterion's hot PD and DC at 1024
/// × 12 on 2 cores read 4–7 % above the build without trials; at most 8192
/// apart, 0–3 % (BENCHMARKS.md).
const MAX_PERIOD: u32 = 8192;

/// The most the median step alone may take, as a fraction of the median
/// step in parts, for the caller's thread alone to be chosen (4/5).
const MARGIN: (u64, u64) = (4, 5);

/// The choice and its trials: a trial is [`TRIAL`] steps alone, then as
/// many in parts; the faster by median runs until the next trial.
#[derive(Debug, Clone)]
pub(crate) struct SplitChoice {
    /// The trial's step times so far (ns), those alone first.
    times: [u64; 2 * TRIAL],
    /// How many of `times` are in.
    len: usize,
    /// Steps before the next trial; 0 during one.
    countdown: u32,
    /// Whether the last trial found the calling thread alone faster.
    alone: bool,
    /// The steps between the last trial and the next.
    period: u32,
}

impl SplitChoice {
    /// Parts until the first trial, [`MIN_PERIOD`] steps in (the first
    /// steps find cold tables and workers just woken).
    pub(crate) fn new() -> Self {
        SplitChoice {
            times: [0; 2 * TRIAL],
            len: 0,
            countdown: MIN_PERIOD,
            alone: false,
            period: MIN_PERIOD,
        }
    }

    /// Whether the next step runs on the calling thread alone.
    pub(crate) fn alone(&self) -> bool {
        if self.countdown > 0 {
            self.alone
        } else {
            self.len < TRIAL
        }
    }

    /// Whether the next step is timed (one of a trial's).
    pub(crate) fn timing(&self) -> bool {
        self.countdown == 0
    }

    /// Notes a step that ran as [`alone`](Self::alone) said, and its time
    /// in ns where [`timing`](Self::timing) asked for one.
    pub(crate) fn note(&mut self, ns: Option<u64>) {
        if self.countdown > 0 {
            self.countdown -= 1;
            return;
        }
        self.times[self.len] = ns.unwrap_or(0);
        self.len += 1;
        if self.len == 2 * TRIAL {
            let (alone, parts) = self.times.split_at_mut(TRIAL);
            alone.sort_unstable();
            parts.sort_unstable();
            // Alone only when clearly faster: a step in parts right after
            // steps alone may find its worker slow for a while.
            let faster_alone = alone[TRIAL / 2] * MARGIN.1 < parts[TRIAL / 2] * MARGIN.0;
            self.period = if faster_alone == self.alone {
                (2 * self.period).min(MAX_PERIOD)
            } else {
                MIN_PERIOD
            };
            self.alone = faster_alone;
            self.len = 0;
            self.countdown = self.period;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `steps` steps whose time alone is `alone_ns` and in parts
    /// `parts_ns`; returns how many ran alone.
    fn run(choice: &mut SplitChoice, steps: usize, alone_ns: u64, parts_ns: u64) -> usize {
        let mut ran_alone = 0;
        for _ in 0..steps {
            let alone = choice.alone();
            ran_alone += usize::from(alone);
            let ns = if alone { alone_ns } else { parts_ns };
            choice.note(choice.timing().then_some(ns));
        }
        ran_alone
    }

    #[test]
    fn the_faster_way_by_median_runs_until_the_next_trial() {
        let mut choice = SplitChoice::new();
        let (min, max) = (MIN_PERIOD as usize, MAX_PERIOD as usize);
        // In parts until the first trial.
        assert_eq!(run(&mut choice, min, 3_000, 2_600), 0);
        // The trial: eight alone, eight in parts; then the parts, faster,
        // for twice as long each time they win again, up to the most.
        let doubling = (1..).map(|k| (min << k).min(max)).take_while(|&p| p < max);
        for period in doubling.chain([max, max]) {
            assert!(choice.timing());
            assert_eq!(run(&mut choice, 2 * TRIAL, 3_000, 2_600), TRIAL);
            assert!(!choice.alone() && !choice.timing());
            assert_eq!(run(&mut choice, period, 3_000, 2_600), 0, "{period}");
        }
        // A trial that finds the caller's thread alone faster: alone, and
        // the next trial soon.
        assert_eq!(run(&mut choice, 2 * TRIAL, 3_400, 7_500), TRIAL);
        assert_eq!(run(&mut choice, min, 3_400, 7_500), min);
        assert!(choice.timing());
        // It was the host: the parts again, and again soon.
        assert_eq!(run(&mut choice, 2 * TRIAL, 3_000, 2_600), TRIAL);
        assert_eq!(run(&mut choice, min, 3_000, 2_600), 0);
        assert!(choice.timing());
    }

    #[test]
    fn a_few_slow_steps_do_not_decide_a_trial() {
        let mut choice = SplitChoice::new();
        run(&mut choice, MIN_PERIOD as usize, 0, 0);
        // Three of the eight steps alone slowed by the host, 40 µs each.
        for k in 0..2 * TRIAL {
            let ns = match k {
                2 | 4 | 6 => 40_000,
                _ if k < TRIAL => 3_000,
                _ => 4_000,
            };
            choice.note(Some(ns));
        }
        assert!(choice.alone());
    }

    #[test]
    fn the_caller_alone_must_be_clearly_faster() {
        let mut choice = SplitChoice::new();
        run(&mut choice, MIN_PERIOD as usize, 0, 0);
        // Alone 14 % faster: the parts stay.
        assert_eq!(run(&mut choice, 2 * TRIAL, 3_000, 3_500), TRIAL);
        assert!(!choice.alone());
        // Alone 25 % faster at the next trial: alone.
        run(&mut choice, 2 * MIN_PERIOD as usize, 3_000, 3_500);
        assert_eq!(run(&mut choice, 2 * TRIAL, 3_000, 4_000), TRIAL);
        assert!(choice.alone());
    }
}
