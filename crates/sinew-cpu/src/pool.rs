//! The threads a step runs on: one rayon pool per stepping thread, led by
//! that thread, whose other workers stay awake for a while after each step
//! (the spin wait) so that the next step, or the caller's own work sent to
//! the pool with [`install`], finds them running. A large step runs on the
//! pool's rayon workers; a small one, while they spin, hands them one part
//! each directly ([`fan_out`]). A caller that steps at a steady pace, with
//! gaps longer than the spin wait between its steps (its simulator's own
//! step), finds them awake too: they sleep through the gap on a timer and
//! wake just before the next step is due ([`step_starts`]).

use std::any::Any;
use std::cell::Cell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{fence, AtomicPtr, AtomicU64, AtomicUsize};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
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
    /// The latest gaps longer than the spin wait between the end of a step
    /// and the start of the next, newest first, in ns (0: none yet).
    gaps: Cell<[u64; GAPS]>,
    /// Whether this thread is inside [`fan_out`], whose parts a nested call
    /// runs here one after another.
    fanning: Cell<bool>,
}

/// How many of the latest long gaps between steps must agree
/// ([`StepPool::starts`]) before the workers sleep through the next on a
/// timer rather than until a step wakes them.
const GAPS: usize = 3;

/// The longest gap between steps the workers sleep through on a timer (a
/// second; a step further apart than that pays for a wake).
const MAX_GAP: u64 = 1_000_000_000;

/// A worker sleeps until the next step is due only when that is further
/// off than this (ns); otherwise it spins until then.
const MIN_NAP: u64 = 20_000;

/// How long before the next step is due a worker first sets its timer, in
/// ns; after each nap ([`Awake::spin`]) the lead shrinks by an eighth, but
/// not below half again as much as the timer was late. On a 2-core VM a
/// timer of 0.9 ms woke a thread 78–231 µs late (p10–p99, two runs) with
/// Linux's default timer slack of 50 µs, 33–143 µs with the workers' 1 µs
/// ([`tight_timers`]).
const FIRST_LEAD: u64 = 250_000;

/// When the pool's other workers may sleep, how many spin jobs are out,
/// and the parts a step offers them ([`fan_out`]).
#[derive(Default)]
struct Awake {
    /// The time ([`now_ns`]) until which the workers spin.
    until: AtomicU64,
    /// Spin jobs spawned and not yet returned.
    spinning: AtomicUsize,
    /// When ([`now_ns`]) the pool's leading thread last ended a step noted
    /// by [`step_ended`] (0: none yet), and the gap it expects before the
    /// next ([`StepPool::starts`]; 0: none), on a line of their own:
    /// written once per step, read by the workers only once their spin
    /// wait has passed.
    pace: Padded<(AtomicU64, AtomicU64)>,
    /// The core the pool's leading thread last sent the workers to spin
    /// from ([`this_cpu`]), on a line of its own.
    caller_cpu: Padded<AtomicUsize>,
    /// Workers asleep until the next step is due ([`Awake::nap`]), woken
    /// early by the caller's own work ([`install`]) or by steps that come
    /// back to back again ([`StepPool::keep_awake`]).
    napping: AtomicUsize,
    nap_lock: Mutex<()>,
    alarm: Condvar,
    /// The step's parts on offer: written by the pool's leading thread,
    /// read by the spinning workers.
    offer: Padded<Offer>,
    /// Part `i`'s claim and result: written by whichever thread runs it.
    parts: [Part; MAX_PARTS],
    /// A panic from a part run on a worker, resumed on the leading thread.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

/// The parts a step offers ([`fan_out`]), as a seqlock: `seq` is odd while
/// the leading thread writes the rest, and otherwise names the offer.
#[derive(Default)]
struct Offer {
    seq: AtomicU64,
    /// The step's `run` closure, erased, and the function that calls it.
    data: AtomicPtr<()>,
    call: AtomicPtr<()>,
    count: AtomicUsize,
}

/// One part of the step on offer, its claim and its result on lines of
/// their own: the leading thread polls the result, and a line it reads
/// must come back to the worker's core before the worker can write it.
#[derive(Default)]
struct Part {
    /// The latest offer (its `seq`) whose part `i` a thread has claimed.
    claimed: Padded<AtomicU64>,
    /// The latest offer whose part `i` has run on a worker, and its result.
    done: Padded<(AtomicU64, AtomicUsize)>,
}

/// The most parts a step is handed out in by [`fan_out`].
pub(crate) const MAX_PARTS: usize = 16;

/// How many times a spinning worker looks for a step's parts between its
/// looks for other work.
const POLLS: usize = 16;

/// How many rounds of [`POLLS`] with nothing to do a spinning worker
/// makes between two offers of its core to other threads (`sched_yield`,
/// which returns at once when no other thread waits for the core).
/// Without them, the caller's own multithreaded work between steps waited
/// for the spinning threads: in mjlab's entity loop with torch on 2
/// threads on 2 cores, `write_data_to_sim()` took 1 039–1 408 µs with the
/// spin wait at its default and 922–1 065 with it at 0; with them, 940–1
/// 044 at the default (BENCHMARKS.md).
const YIELD_POLLS: usize = 16;

/// A value alone on its cache lines: a line written by one thread and
/// read by another moves between their cores (a few hundred ns on a VM).
#[repr(align(128))]
#[derive(Default)]
struct Padded<T>(T);

/// Calls the closure at `data` (an `F`) on `part`.
///
/// # Safety
/// `data` must point to a live `F`.
unsafe fn call<F: Fn(usize) -> usize + Sync>(data: *const (), part: usize) -> usize {
    // SAFETY: the caller's guarantee.
    unsafe { (*data.cast::<F>())(part) }
}

/// Runs `op`, catching its panic into `panic`; 0 then.
fn caught(panic: &Mutex<Option<Box<dyn Any + Send>>>, op: impl FnOnce() -> usize) -> usize {
    catch_unwind(AssertUnwindSafe(op)).unwrap_or_else(|payload| {
        *panic.lock().unwrap_or_else(|e| e.into_inner()) = Some(payload);
        0
    })
}

/// The sum of `run(part)` over the parts `0..count` (at most
/// [`MAX_PARTS`]). Part 0 runs on this thread and part `i` on the pool's
/// worker `i` while the workers spin ([`awake`]), so that a part's rows
/// stay in the cache of the core that ran them the step before. The parts
/// are offered to the spinning workers in lines they poll, not through
/// rayon's job queues: on 2 cores a join there left a step of a few µs as
/// slow on two threads as on one. A part no worker has claimed when this
/// thread is done with its own, and has waited as long again, runs here (its
/// worker descheduled). Returns once every part has run; a panic in `run`
/// resumes here. A `fan_out` inside `run` runs its parts one after another
/// on its thread.
pub(crate) fn fan_out<F: Fn(usize) -> usize + Sync>(count: usize, run: &F) -> usize {
    assert!(count <= MAX_PARTS, "{count} parts, at most {MAX_PARTS}");
    POOL.with(|p| {
        let Some(p) = p.as_ref().filter(|p| count > 1 && !p.fanning.get()) else {
            return (0..count).map(run).sum();
        };
        p.fanning.set(true);
        let awake = &*p.awake;
        let offer = &awake.offer.0;
        // Only this thread writes the offer.
        let seq = offer.seq.load(Relaxed) + 2;
        offer.seq.store(seq - 1, Relaxed);
        fence(Release);
        offer
            .data
            .store(ptr::from_ref(run).cast::<()>().cast_mut(), Relaxed);
        offer.call.store(call::<F> as *mut (), Relaxed);
        offer.count.store(count, Relaxed);
        offer.seq.store(seq, Release);
        let start = now_ns();
        let mut total = caught(&awake.panic, || run(0));
        let patience = now_ns().saturating_sub(start);
        for (i, part) in awake.parts[1..count].iter().enumerate() {
            let (done, out) = &part.done.0;
            let deadline = now_ns().saturating_add(patience);
            while done.load(Acquire) < seq && now_ns() < deadline {
                std::hint::spin_loop();
            }
            if done.load(Acquire) < seq {
                if part.claimed.0.fetch_max(seq, Acquire) < seq {
                    total += caught(&awake.panic, || run(i + 1));
                    continue;
                }
                // Claimed by its worker: `run` outlives its use there.
                while done.load(Acquire) < seq {
                    std::hint::spin_loop();
                }
            }
            total += out.load(Relaxed);
        }
        p.keep_awake();
        p.fanning.set(false);
        let panic = awake.panic.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(payload) = panic {
            resume_unwind(payload);
        }
        total
    })
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
        // Not run on this thread (index 0): the caller's timers stay its own.
        .start_handler(|_| tight_timers())
        .build()
        .ok()
        .map(|pool| StepPool {
            pool,
            awake: Arc::default(),
            gaps: Cell::new([0; GAPS]),
            fanning: Cell::new(false),
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
            p.awake.wake_nappers();
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

/// Whether this thread's pool has every other worker spinning (none
/// asleep until a step is due, nor just woken from that).
pub(crate) fn awake() -> bool {
    POOL.with(|p| {
        p.as_ref().is_some_and(|p| {
            let others = p.pool.current_num_threads().saturating_sub(1);
            others > 0
                && p.awake.spinning.load(Relaxed) >= others
                && p.awake.napping.load(Relaxed) == 0
                && now_ns() < p.awake.until.load(Relaxed)
        })
    })
}

/// Notes that a step from this thread, big enough to gain from the pool's
/// other workers, starts ([`StepPool::starts`]).
pub(crate) fn step_starts() {
    POOL.with(|p| {
        if let Some(p) = p {
            p.starts(now_ns());
        }
    });
}

/// Notes that a step from this thread, big enough to gain from the pool's
/// other workers, has ended; `alone`: it ran on this thread alone (they
/// were asleep). When the step before it ended less than the spin wait
/// ago (a caller stepping back to back), such a step sends them spin jobs,
/// so that the next step finds them awake and runs on every thread; steps
/// further apart wake nobody (a wake costs the caller's thread more than
/// the step would gain, and the workers' spin, 0.3 ms of a core a step,
/// far more: PD at 1024 × 12 a step every 1.1 ms took 5.3–5.7 µs alone,
/// 5.0–5.5 with them awake).
pub(crate) fn step_ended(alone: bool) {
    POOL.with(|p| {
        if let Some(p) = p {
            let now = now_ns();
            let last = p.last_end();
            p.awake.pace.0 .0.store(now.max(1), Relaxed);
            if alone && last.is_some_and(|last| now - last < SPIN_NS.load(Relaxed)) {
                p.keep_awake();
            }
        }
    });
}

/// The core this thread runs on (`usize::MAX` where that is not known).
fn this_cpu() -> usize {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `sched_getcpu` takes no arguments; −1 on failure.
        usize::try_from(unsafe { libc::sched_getcpu() }).unwrap_or(usize::MAX)
    }
    #[cfg(not(target_os = "linux"))]
    {
        usize::MAX
    }
}

/// Lets this thread's timers end within 1 µs of their time rather than
/// Linux's default 50 µs of slack, so that a worker's nap ([`Awake::nap`])
/// ends closer to the step it waits for and it spins less before it. On a
/// 2-core VM a 0.9 ms sleep ended 41 and 80 µs late (p50, two runs) so,
/// 86 and 129 µs with the default slack.
fn tight_timers() {
    #[cfg(target_os = "linux")]
    // SAFETY: `PR_SET_TIMERSLACK` takes the slack in ns as an unsigned
    // long and changes only this thread's timers.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong);
    }
}

/// Moves this thread off core `cpu` onto another it may run on, leaving it
/// free to run on any of them afterwards (its affinity as it was).
#[cfg(target_os = "linux")]
fn leave_cpu(cpu: usize) {
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: the sets are plain bit masks of `size` bytes, and the calls
    // only read or write this thread's affinity.
    unsafe {
        let mut allowed: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, size, &mut allowed) != 0 || cpu >= libc::CPU_SETSIZE as usize
        {
            return;
        }
        let mut elsewhere = allowed;
        libc::CPU_CLR(cpu, &mut elsewhere);
        if libc::CPU_COUNT(&elsewhere) > 0 && libc::sched_setaffinity(0, size, &elsewhere) == 0 {
            libc::sched_setaffinity(0, size, &allowed);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn leave_cpu(_cpu: usize) {}

/// Nanoseconds since the first call in the process.
pub(crate) fn now_ns() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    u64::try_from(EPOCH.get_or_init(Instant::now).elapsed().as_nanos()).unwrap_or(u64::MAX)
}

impl StepPool {
    /// When the last step noted by [`step_ended`] ended, if one has.
    fn last_end(&self) -> Option<u64> {
        Some(self.awake.pace.0 .0.load(Relaxed)).filter(|&end| end > 0)
    }

    /// Notes a step starting at `now`. A gap since the last step's end
    /// longer than the spin wait (the caller's own work, a simulator's
    /// step) joins the latest [`GAPS`]; when they agree within half the
    /// shortest, the shortest is the gap the workers expect before the next
    /// step: once their spin wait has passed they sleep on a timer until
    /// just before it is due ([`Awake::spin`]), rather than until a step
    /// wakes them. A woken thread on a VM starts tens of µs to ms later, on
    /// the waking thread's core as often as not (there it runs in turn with
    /// that thread, not beside it); a timer wakes it on its own core.
    fn starts(&self, now: u64) {
        let spin = SPIN_NS.load(Relaxed);
        let Some(end) = self.last_end() else {
            return;
        };
        let gap = now.saturating_sub(end);
        if spin == 0 || gap <= spin {
            return;
        }
        let mut gaps = self.gaps.get();
        gaps.rotate_right(1);
        gaps[0] = gap;
        self.gaps.set(gaps);
        let short = gaps.iter().copied().min().unwrap_or(0);
        let long = gaps.iter().copied().max().unwrap_or(0);
        let steady = short > 0 && short <= MAX_GAP && long - short <= short / 2;
        let expect = if steady { short } else { 0 };
        let expected = &self.awake.pace.0 .1;
        if expected.load(Relaxed) != expect {
            expected.store(expect, Relaxed);
        }
    }

    /// Moves the spin deadline to the spin wait from now (unless it is
    /// still more than three quarters of the wait away: each move takes
    /// the line the spinning workers read from their cores), wakes workers
    /// asleep until a later step was due (steps came sooner), and sends a
    /// spin job to each other worker not spinning yet.
    fn keep_awake(&self) {
        let spin = SPIN_NS.load(Relaxed);
        let others = self.pool.current_num_threads().saturating_sub(1);
        if spin == 0 || others == 0 {
            return;
        }
        self.awake.wake_nappers();
        let cpu = this_cpu();
        if self.awake.caller_cpu.0.load(Relaxed) != cpu {
            self.awake.caller_cpu.0.store(cpu, Relaxed);
        }
        let until = now_ns().saturating_add(spin);
        if self.awake.until.load(Relaxed) < until - spin / 4 {
            self.awake.until.fetch_max(until, Relaxed);
        }
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
    /// Runs this worker's part of the step on offer ([`fan_out`]), unless
    /// it has looked at that offer before (`seen`); true if it ran it.
    fn help(&self, seen: &mut u64) -> bool {
        let offer = &self.offer.0;
        let seq = offer.seq.load(Acquire);
        if seq == *seen || seq % 2 == 1 {
            return false;
        }
        let (data, run, count) = (
            offer.data.load(Relaxed),
            offer.call.load(Relaxed),
            offer.count.load(Relaxed),
        );
        fence(Acquire);
        if offer.seq.load(Relaxed) != seq {
            return false;
        }
        *seen = seq;
        let Some(i) = rayon::current_thread_index().filter(|&i| i > 0 && i < count) else {
            return false;
        };
        let part = &self.parts[i];
        if part.claimed.0.fetch_max(seq, Acquire) >= seq {
            return false;
        }
        // SAFETY: `call` was stored as a `call::<F>` with `data` an `&F`,
        // in the same offer (`seq` unchanged around the loads). The part
        // is claimed, so its leading thread waits in `fan_out` for `done`
        // and `F` lives until then.
        let run =
            unsafe { std::mem::transmute::<*mut (), unsafe fn(*const (), usize) -> usize>(run) };
        let out = caught(&self.panic, || unsafe { run(data, i) });
        part.done.0 .1.store(out, Relaxed);
        part.done.0 .0.store(seq, Release);
        true
    }

    /// A spin job: run any work the pool has (the next step's rows as soon
    /// as the caller offers them, or the caller's own work sent with
    /// [`install`]), else pause, until `spin` nanoseconds have passed since
    /// both the deadline and the last work it ran. Then, while the caller
    /// steps at a steady pace ([`StepPool::starts`]), sleep until a little
    /// before the next step is due and spin until the spin wait after it,
    /// and so on; a step later than that ends the job. The pool's leading
    /// thread (the caller) and a worker already spinning return at once.
    fn spin(&self, spin: u64) {
        let leader = rayon::current_thread_index() == Some(0);
        if !leader && !SPINNING.replace(true) {
            self.leave_caller_cpu();
            let (mut busy_until, mut seen, mut lead) = (0, 0, FIRST_LEAD);
            // Rounds of polls with nothing to do ([`YIELD_POLLS`]).
            let mut polls = 0usize;
            loop {
                if self.help(&mut seen) || rayon::yield_now() == Some(rayon::Yield::Executed) {
                    busy_until = now_ns().saturating_add(spin);
                } else if now_ns() >= busy_until.max(self.until.load(Relaxed)) {
                    let (ended, gap) = (self.pace.0 .0.load(Relaxed), self.pace.0 .1.load(Relaxed));
                    let due = ended.saturating_add(gap);
                    let now = now_ns();
                    if gap == 0 || now >= due.saturating_add(spin) {
                        break;
                    }
                    let wake = due.saturating_sub(lead);
                    if wake > now + MIN_NAP {
                        self.nap(wake - now);
                        self.leave_caller_cpu();
                        let woke = now_ns();
                        if woke < wake {
                            // Woken early ([`Awake::wake_nappers`]): the
                            // caller wants every thread now.
                            busy_until = woke.saturating_add(spin);
                            continue;
                        }
                        lead = (lead - lead / 8)
                            .max((woke - wake) * 3 / 2)
                            .min(gap / 2)
                            .max(MIN_NAP);
                        continue;
                    }
                    // Awake until the spin wait after the step is due: the
                    // caller sees it so ([`awake`]) and hands it a part.
                    self.until.fetch_max(due.saturating_add(spin), Relaxed);
                } else {
                    // A step's parts are looked for more often than the
                    // rest: a step of a few µs waits for them.
                    for _ in 0..POLLS {
                        if self.offer.0.seq.load(Relaxed) != seen {
                            break;
                        }
                        std::hint::spin_loop();
                    }
                    // Now and then, the core goes to any other thread
                    // waiting for it (the caller's own threads between
                    // steps); with none, the call returns at once.
                    polls = polls.wrapping_add(1);
                    if polls.is_multiple_of(YIELD_POLLS) {
                        std::thread::yield_now();
                    }
                }
            }
            SPINNING.set(false);
        }
        self.spinning.fetch_sub(1, Relaxed);
    }

    /// Moves this worker to another core when it runs on the one the
    /// pool's leading thread last sent it to spin from. Linux wakes a sleeping
    /// thread on its waker's core as often as not, and a timer wakes it
    /// where it slept; there it runs in turn with the caller rather than
    /// beside it. On a 2-core VM, 700 of 1 492 wakes before a step (PD at
    /// 4096 × 29, a step every 1.1 ms) found the worker on the caller's
    /// core, and those steps took 110–135 µs against 50–60 (BENCHMARKS.md).
    fn leave_caller_cpu(&self) {
        let cpu = this_cpu();
        if cpu != usize::MAX && cpu == self.caller_cpu.0.load(Relaxed) {
            leave_cpu(cpu);
        }
    }

    /// Wakes the workers asleep until the next step is due ([`nap`](Self::nap)).
    fn wake_nappers(&self) {
        if self.napping.load(Relaxed) > 0 {
            drop(self.nap_lock.lock().unwrap_or_else(|e| e.into_inner()));
            self.alarm.notify_all();
        }
    }

    /// Sleeps for `ns` nanoseconds, or until [`wake_nappers`](Self::wake_nappers).
    fn nap(&self, ns: u64) {
        let guard = self.nap_lock.lock().unwrap_or_else(|e| e.into_inner());
        self.napping.fetch_add(1, Relaxed);
        drop(self.alarm.wait_timeout(guard, Duration::from_nanos(ns)));
        self.napping.fetch_sub(1, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fan_out_runs_each_part_once_on_its_worker_or_here_and_resumes_a_panic() {
        let threads = threads();
        let count = threads.clamp(2, MAX_PARTS);
        for round in 0..300 {
            // Every other round finds the workers spinning (unless another
            // test has turned the spin wait off): their parts run there.
            if round % 2 == 0 {
                install(|| ());
            }
            let runs: [AtomicUsize; MAX_PARTS] = Default::default();
            let ran_on: [AtomicUsize; MAX_PARTS] = Default::default();
            // Every third round, the other parts outlast this thread's and
            // its wait for them: a part claimed by its worker is waited for.
            let slow = round % 3 == 0;
            let total = fan_out(count, &|part| {
                runs[part].fetch_add(1, Relaxed);
                ran_on[part].store(rayon::current_thread_index().unwrap_or(usize::MAX), Relaxed);
                if slow {
                    std::thread::sleep(Duration::from_micros(if part == 0 { 50 } else { 300 }));
                }
                1000 * round + part
            });
            assert_eq!(
                total,
                (0..count).map(|part| 1000 * round + part).sum::<usize>()
            );
            for (part, run) in runs.iter().enumerate() {
                assert_eq!(run.load(Relaxed), usize::from(part < count), "part {part}");
            }
            // Part 0 here; each other part on its own worker or, when that
            // one was not looking, here.
            assert_eq!(ran_on[0].load(Relaxed), 0);
            for (part, ran_on) in ran_on.iter().enumerate().take(count).skip(1) {
                assert!([0, part].contains(&ran_on.load(Relaxed)), "part {part}");
            }
        }
        assert_eq!(fan_out(0, &|_| 1), 0);
        assert_eq!(fan_out(1, &|part| part + 7), 7);
        // A part's panic, here or on a worker, comes back here once every
        // part has run; the next fan-out runs as before.
        for panicking in 0..count {
            install(|| ());
            let runs = AtomicUsize::new(0);
            let result = catch_unwind(AssertUnwindSafe(|| {
                fan_out(count, &|part| {
                    runs.fetch_add(1, Relaxed);
                    assert_ne!(part, panicking, "part {part} fails");
                    1
                })
            }));
            let payload = result.expect_err("the panic comes back");
            let message = payload
                .downcast_ref::<String>()
                .expect("a formatted message");
            assert!(
                message.contains(&format!("part {panicking} fails")),
                "{message}"
            );
            assert_eq!(runs.load(Relaxed), count);
            assert_eq!(fan_out(count, &|_| 1), count);
        }
    }

    /// Spin jobs out in this thread's pool.
    fn spinning() -> usize {
        POOL.with(|p| p.as_ref().map_or(0, |p| p.awake.spinning.load(Relaxed)))
    }

    /// Held by the tests that set the process-wide spin wait.
    static SPIN_WAIT: Mutex<()> = Mutex::new(());

    #[test]
    fn install_and_steps_back_to_back_spin_the_step_pool_whose_workers_then_stop() {
        let _alone = SPIN_WAIT.lock().unwrap_or_else(|e| e.into_inner());
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

    /// This thread's pool's workers asleep until the next step is due.
    fn napping() -> usize {
        POOL.with(|p| p.as_ref().map_or(0, |p| p.awake.napping.load(Relaxed)))
    }

    /// The gap this thread's pool expects before the next step (ns).
    fn expected_gap() -> u64 {
        POOL.with(|p| p.as_ref().map_or(0, |p| p.awake.pace.0 .1.load(Relaxed)))
    }

    /// A step on the pool's threads, as the driver takes one.
    fn pooled_step() {
        step_starts();
        install(|| ());
        step_ended(false);
    }

    /// `count` steps on the pool's threads, `gap` apart.
    fn paced_steps(gap: Duration, count: usize) {
        for _ in 0..count {
            std::thread::sleep(gap);
            pooled_step();
        }
    }

    /// Polls `done` every 100 µs for up to `limit`; whether it came true.
    fn within(limit: Duration, done: impl Fn() -> bool) -> bool {
        let start = Instant::now();
        while !done() {
            if start.elapsed() > limit {
                return false;
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        true
    }

    #[test]
    fn workers_sleep_through_steady_gaps_and_wake_before_the_next_step() {
        let _alone = SPIN_WAIT.lock().unwrap_or_else(|e| e.into_inner());
        let others = threads() - 1;
        if others == 0 {
            return;
        }
        let spin = Duration::from_millis(10);
        set_spin_wait(spin);
        // Gaps that disagree by more than half the shortest set no pace.
        pooled_step();
        for gap in [30, 90, 30] {
            std::thread::sleep(Duration::from_millis(gap));
            pooled_step();
        }
        assert_eq!(expected_gap(), 0);
        // Three gaps of 60 ms do: once the spin wait after the last step
        // has passed, the workers sleep, and they are awake again before
        // the next step is due (60 ms after the last one ended).
        let gap = Duration::from_millis(60);
        paced_steps(gap, 3);
        let ended = Instant::now();
        let expected = Duration::from_nanos(expected_gap());
        assert!(expected >= gap && expected < gap * 3 / 2, "{expected:?}");
        assert!(within(Duration::from_secs(5), || napping() == others));
        // While they sleep, a step does not count on them, even with the
        // spin deadline ahead (as right after a step that wakes them).
        let deadline =
            |until| POOL.with(|p| p.as_ref().map(|p| p.awake.until.swap(until, Relaxed)));
        let until = deadline(u64::MAX).expect("a pool");
        let asleep = !awake();
        deadline(until);
        assert!(asleep);
        assert!(within(expected + spin, awake), "awake before the step");
        assert!(ended.elapsed() > expected / 2, "slept until near the step");
        // A step that does not come ends their spin jobs.
        assert!(within(Duration::from_secs(10), || spinning() == 0));
        // Steps back to back again wake them before the step was due:
        // a pace of 100 ms, then two steps run alone 30 ms into a gap.
        paced_steps(Duration::from_millis(100), 4);
        assert!(within(Duration::from_secs(5), || napping() == others));
        std::thread::sleep(Duration::from_millis(20));
        for _ in 0..2 {
            step_starts();
            step_ended(true);
        }
        assert!(within(Duration::from_millis(40), || napping() == 0));
        assert!(within(Duration::from_millis(40), awake));
        // The caller's own work wakes them early, before it runs: gaps of
        // 200 ms, and an `install` 100 ms into the next.
        paced_steps(Duration::from_millis(200), 4);
        assert!(within(Duration::from_secs(5), || napping() == others));
        std::thread::sleep(Duration::from_millis(100));
        assert!(install(
            || within(Duration::from_millis(60), || napping() == 0)
        ));
        set_spin_wait(DEFAULT_SPIN_WAIT);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_workers_timers_are_tight_and_the_callers_left_alone() {
        // SAFETY: `PR_GET_TIMERSLACK` reads this thread's slack.
        let slack = || unsafe { libc::prctl(libc::PR_GET_TIMERSLACK) };
        let caller = slack();
        let slacks = install(|| rayon::broadcast(|_| slack()));
        assert_eq!(slacks.len(), threads());
        assert_eq!(slacks[0], caller);
        assert!(slacks[1..].iter().all(|&s| s == 1000), "{slacks:?}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_worker_leaves_the_core_it_is_on_and_keeps_its_affinity() {
        let size = std::mem::size_of::<libc::cpu_set_t>();
        let affinity = || {
            // SAFETY: a plain bit mask of `size` bytes.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                assert_eq!(libc::sched_getaffinity(0, size, &mut set), 0);
                set
            }
        };
        let before = affinity();
        // SAFETY: reads the mask.
        if unsafe { libc::CPU_COUNT(&before) } < 2 {
            return;
        }
        for _ in 0..20 {
            let cpu = this_cpu();
            assert!(cpu < libc::CPU_SETSIZE as usize);
            leave_cpu(cpu);
            assert_ne!(this_cpu(), cpu);
            // SAFETY: compares two masks.
            assert!(unsafe { libc::CPU_EQUAL(&affinity(), &before) });
        }
    }
}
