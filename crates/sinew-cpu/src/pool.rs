//! The threads a step runs on: one rayon pool per stepping thread, led by
//! that thread, whose other workers stay awake for a while after each step
//! (the spin wait) so that the next step, or the caller's own work sent to
//! the pool with [`install`], finds them running.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// How long a step's pool keeps its other workers awake after the step, in
/// nanoseconds ([`set_spin_wait`]).
static SPIN_NS: AtomicU64 = AtomicU64::new(DEFAULT_SPIN_WAIT.as_nanos() as u64);

/// The spin wait a process starts with ([`crate::CpuBackend::DEFAULT_SPIN_WAIT`]).
pub(crate) const DEFAULT_SPIN_WAIT: Duration = Duration::from_micros(200);

/// Sets how long, after a step or an [`install`], the other workers of the
/// step's pool keep looking for work before they sleep (for every CPU
/// backend in the process). While they spin they use their cores; zero
/// lets them sleep at once, as rayon's own workers do.
pub(crate) fn set_spin_wait(wait: Duration) {
    SPIN_NS.store(u64::try_from(wait.as_nanos()).unwrap_or(u64::MAX), Relaxed);
}

/// The spin wait now in force ([`set_spin_wait`]).
pub(crate) fn spin_wait() -> Duration {
    Duration::from_nanos(SPIN_NS.load(Relaxed))
}

/// A pool and its workers' shared spin state.
struct StepPool {
    pool: rayon::ThreadPool,
    awake: Arc<Awake>,
    /// When ([`now_ns`]) the last step noted by [`step_ended`] ended.
    last_step: Cell<Option<u64>>,
}

/// When the pool's other workers may sleep, and how many spin jobs are out.
#[derive(Default)]
struct Awake {
    /// The time ([`now_ns`]) until which the workers spin.
    until: AtomicU64,
    /// Spin jobs spawned and not yet returned.
    spinning: AtomicUsize,
}

thread_local! {
    /// The pool a step from this thread runs in: this thread as its first
    /// worker and `rayon::current_num_threads() − 1` more. The step then
    /// starts on the calling thread at once, and runs there whatever no
    /// other worker has taken by the time it gets to it; a step sent to
    /// rayon's global pool instead waits for a parked worker to wake, with
    /// the caller a third thread on two cores (PD took 9 µs at 1100 × 29 on
    /// one thread, 23–30 µs at 1150 × 29 through the global pool, 5–6 µs
    /// in this pool). `None` where this thread is a rayon worker already:
    /// its step runs in that pool. One pool per stepping thread, kept for
    /// the thread's life (rayon leaks a pool's registry that uses its
    /// building thread).
    static POOL: Option<StepPool> = rayon::ThreadPoolBuilder::new()
        .num_threads(rayon::current_num_threads())
        .use_current_thread()
        .build()
        .ok()
        .map(|pool| StepPool {
            pool,
            awake: Arc::default(),
            last_step: Cell::new(None),
        });

    /// Whether this worker is in a spin job (one it picks up while spinning
    /// returns at once).
    static SPINNING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `op` on the threads a step from this thread runs on: this thread
/// and the other workers of its pool, which then spin for the
/// [`spin_wait`]. Rayon's parallel iterators inside `op` use that pool
/// ([`crate::CpuBackend::install`]). Called from a rayon worker, `op` runs
/// where it is.
pub(crate) fn install<R: Send>(op: impl FnOnce() -> R + Send) -> R {
    POOL.with(|step_pool| match step_pool {
        Some(p) => {
            let out = p.pool.install(op);
            p.keep_awake();
            out
        }
        None => op(),
    })
}

/// The threads a step from this thread runs on.
pub(crate) fn threads() -> usize {
    POOL.with(|p| {
        p.as_ref()
            .map_or_else(rayon::current_num_threads, |p| p.pool.current_num_threads())
    })
}

/// Whether this thread's pool has every other worker spinning.
pub(crate) fn awake() -> bool {
    POOL.with(|p| {
        p.as_ref().is_some_and(|p| {
            let others = p.pool.current_num_threads().saturating_sub(1);
            others > 0
                && p.awake.spinning.load(Relaxed) >= others
                && now_ns() < p.awake.until.load(Relaxed)
        })
    })
}

/// Notes that a step from this thread, big enough to gain from the pool's
/// other workers, has ended; `alone`: it ran on this thread alone (they
/// were asleep). When the step before it ended less than the spin wait
/// ago (a caller stepping back to back), such a step sends them spin jobs,
/// so that the next step finds them awake and runs on every thread; steps
/// further apart wake nobody (a wake costs the caller's thread more than
/// the step would gain).
pub(crate) fn step_ended(alone: bool) {
    POOL.with(|p| {
        if let Some(p) = p {
            let now = now_ns();
            let last = p.last_step.replace(Some(now));
            if alone && last.is_some_and(|last| now - last < SPIN_NS.load(Relaxed)) {
                p.keep_awake();
            }
        }
    });
}

/// Nanoseconds since the first call in the process.
fn now_ns() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    u64::try_from(EPOCH.get_or_init(Instant::now).elapsed().as_nanos()).unwrap_or(u64::MAX)
}

impl StepPool {
    /// Moves the spin deadline to the spin wait from now, and sends a spin
    /// job to each other worker not spinning yet.
    fn keep_awake(&self) {
        let spin = SPIN_NS.load(Relaxed);
        let others = self.pool.current_num_threads().saturating_sub(1);
        if spin == 0 || others == 0 {
            return;
        }
        self.awake
            .until
            .fetch_max(now_ns().saturating_add(spin), Relaxed);
        let mut out = self.awake.spinning.load(Relaxed);
        while out < others {
            match self
                .awake
                .spinning
                .compare_exchange_weak(out, out + 1, Relaxed, Relaxed)
            {
                Ok(_) => {
                    let awake = Arc::clone(&self.awake);
                    self.pool.spawn(move || awake.spin(spin));
                    out += 1;
                }
                Err(now) => out = now,
            }
        }
    }
}

impl Awake {
    /// A spin job: run any work the pool has (the next step's rows as soon
    /// as the caller offers them, or the caller's own work sent with
    /// [`install`]), else pause, until `spin` nanoseconds have passed since
    /// both the deadline and the last work it ran. The pool's leading
    /// thread (the caller) and a worker already spinning return at once.
    fn spin(&self, spin: u64) {
        let leader = rayon::current_thread_index() == Some(0);
        if !leader && !SPINNING.replace(true) {
            let mut busy_until = 0;
            loop {
                if rayon::yield_now() == Some(rayon::Yield::Executed) {
                    busy_until = now_ns().saturating_add(spin);
                } else if now_ns() >= busy_until.max(self.until.load(Relaxed)) {
                    break;
                } else {
                    std::hint::spin_loop();
                }
            }
            SPINNING.set(false);
        }
        self.spinning.fetch_sub(1, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spin jobs out in this thread's pool.
    fn spinning() -> usize {
        POOL.with(|p| p.as_ref().map_or(0, |p| p.awake.spinning.load(Relaxed)))
    }

    #[test]
    fn install_and_steps_back_to_back_spin_the_step_pool_whose_workers_then_stop() {
        // The only test that sets the process-wide spin wait (this binary's
        // other tests do not step).
        set_spin_wait(Duration::from_millis(5));
        assert_eq!(spin_wait(), Duration::from_millis(5));
        // `op` runs on this thread, the pool's first worker, with the pool's
        // threads behind rayon's parallel iterators.
        let (index, pool_threads) =
            install(|| (rayon::current_thread_index(), rayon::current_num_threads()));
        assert_eq!(index, Some(0));
        assert_eq!(pool_threads, threads());
        assert_eq!(pool_threads, rayon::current_num_threads().max(1));
        // Every other worker has a spin job, and none is left once the wait
        // has passed (polled: a loaded machine may run the workers late).
        assert_eq!(spinning(), pool_threads - 1);
        let start = Instant::now();
        while spinning() > 0 && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(spinning(), 0);
        // A step run alone sends none when the step before it ended longer
        // than the spin wait ago, and one to each other worker when it
        // ended within the wait; a step run on the pool's threads is noted
        // without sending more (it spins them itself).
        step_ended(true);
        std::thread::sleep(Duration::from_millis(10));
        step_ended(true);
        assert_eq!(spinning(), 0);
        step_ended(false);
        assert_eq!(spinning(), 0);
        step_ended(true);
        assert_eq!(spinning(), pool_threads - 1);
        while spinning() > 0 && start.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(spinning(), 0);
        // With no spin wait, no spin job is sent.
        set_spin_wait(Duration::ZERO);
        install(|| ());
        step_ended(true);
        step_ended(true);
        assert_eq!(spinning(), 0);
        set_spin_wait(DEFAULT_SPIN_WAIT);
    }
}
