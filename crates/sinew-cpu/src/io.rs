//! The CPU side of the kind spec: [`LawIo`] over one run's slices, and the
//! dispatch that monomorphizes each kind's law into its own loop.

use std::mem::MaybeUninit;

// (Every arm but the baseline's is x86-64's.)
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_imports))]
use sinew_core::simd::{form, Form};
use sinew_core::{
    lookup_limits, CommandField, Kind, KindVisitor, LawIo, MAX_INPUTS, MAX_OUTPUTS, MAX_STATE,
};

/// A `[slot][env][ctrl]` table that the parallel chunks of a step read and
/// write, each only at the rows of its own envs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SlotRows {
    ptr: *mut f32,
    slots: usize,
    num_envs: usize,
    num_ctrl: usize,
}

// SAFETY: a `SlotRows` is only dereferenced at rows of envs that the calling
// thread owns for the duration of the step (see the methods' contracts).
unsafe impl Send for SlotRows {}
unsafe impl Sync for SlotRows {}

impl SlotRows {
    /// The table of a plan with `num_envs` × `num_ctrl` planes.
    pub fn new(table: &mut [f32], num_envs: usize, num_ctrl: usize) -> SlotRows {
        let plane = num_envs * num_ctrl;
        SlotRows {
            ptr: table.as_mut_ptr(),
            slots: table.len().checked_div(plane).unwrap_or(0),
            num_envs,
            num_ctrl,
        }
    }

    /// `len` values of slot `slot` from element `at` of its plane (env
    /// `e`'s column `c` is element `e · num_ctrl + c`).
    ///
    /// # Safety
    /// The calling thread owns the envs of those elements: no other thread
    /// touches them while the slice lives, and no `&mut` slice of this
    /// thread overlaps it.
    #[inline(always)]
    pub unsafe fn span(&self, slot: usize, at: usize, len: usize) -> &[f32] {
        assert!(slot < self.slots && at + len <= self.num_envs * self.num_ctrl);
        let start = slot * self.num_envs * self.num_ctrl + at;
        // SAFETY: in bounds (asserted); the caller owns the envs.
        unsafe { std::slice::from_raw_parts(self.ptr.add(start), len) }
    }

    /// [`SlotRows::span`], writable.
    ///
    /// # Safety
    /// As [`SlotRows::span`], and no other slice of this thread overlaps it.
    #[inline(always)]
    #[allow(clippy::mut_from_ref, reason = "rows owned by the calling thread")]
    pub unsafe fn span_mut(&self, slot: usize, at: usize, len: usize) -> &mut [f32] {
        assert!(slot < self.slots && at + len <= self.num_envs * self.num_ctrl);
        let start = slot * self.num_envs * self.num_ctrl + at;
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start), len) }
    }
}

/// One run of one kind's law, as a [`KindVisitor`]: the visit is the loop.
/// Every table is read at the run's elements `at..at + n` of its planes
/// (one env's columns, or on the tile paths a whole tile of env rows).
pub(crate) struct RunLaw<'a> {
    /// `[slot][env][ctrl]`.
    pub params: &'a [f32],
    /// `num_envs × num_ctrl`: one plane of every table.
    pub plane: usize,
    /// The run's first element in a plane.
    pub at: usize,
    /// `[slot][env][ctrl]`: the state the law reads.
    pub state: SlotRows,
    /// `[slot][env][ctrl]`: the state it computes (a copy of `state` at
    /// the run's elements first, so a slot the law leaves alone keeps its
    /// value), committed by the caller when the env's outputs are finite.
    pub next: SlotRows,
    pub targets: [&'a [f32]; 3],
    pub pos: &'a [f32],
    pub vel: &'a [f32],
    pub field: CommandField,
    /// `[plane][env][ctrl]`: every input plane, in ctrl order.
    pub inputs: &'a [f32],
    /// The kind's inputs' and outputs' planes in the plan.
    pub input_planes: &'a [usize],
    pub output_planes: &'a [usize],
    /// `[plane][env][ctrl]`: every output plane.
    pub outputs: SlotRows,
    pub data: &'a [f32],
    pub out: &'a mut [f32],
    /// [`LawIo::force_scale`].
    pub scale: f32,
    /// What the loop also checks for non-finite values (the visit's result).
    pub check: Check,
}

/// What a law's pass checks for non-finite values besides computing
/// ([`RunLaw::check`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Check {
    /// Nothing: the caller checks the outputs env by env.
    Nothing,
    /// The run's output and output planes: its five command values were
    /// checked before the pass (a delayed tile's, before its pushes).
    /// Checking them again took 25 of the 457 instructions per env of
    /// a DC step with every target delayed (4096 × 29, callgrind).
    Outputs,
    /// The run's five command values as well (through the kind's probe,
    /// where it has one).
    All,
}

/// The exponent bits of an `f32`: all set for NaN and ±inf.
const EXP_BITS: u32 = 0x7f80_0000;

/// The bits of `sum · 0`: ±0 when `sum` is finite, a NaN when it is not.
/// OR-ed over many sums of values, [`any_nonfinite`] then tells whether
/// some value may be non-finite (a sum that overflowed reads so too) in
/// an integer reduction that vectorizes.
#[inline(always)]
pub(crate) fn zeroed_bits(sum: f32) -> u32 {
    (sum * 0.0).to_bits()
}

/// Whether some sum OR-ed into `bits` by [`zeroed_bits`] was not finite.
#[inline(always)]
pub(crate) fn any_nonfinite(bits: u32) -> bool {
    bits & EXP_BITS == EXP_BITS
}

impl KindVisitor for RunLaw<'_> {
    /// True when some value [`RunLaw::check`] asks for may be non-finite
    /// (see [`RunLaw::run`]); false with [`Check::Nothing`].
    type Output = bool;

    /// The run's loop, compiled again for AVX-512 and for AVX2 and taken
    /// in the widest form the CPU has. No FMA is enabled (and Rust never
    /// contracts `a·b + c` by itself), so every form gives the same bits.
    /// (Written out rather than through `sinew_core::simd::widest`, whose
    /// closures left the delayed tiles 5 % slower.)
    #[inline(always)]
    fn visit<K: Kind>(self) -> bool {
        macro_rules! run {
            ($run:ident) => {
                match self.check {
                    Check::Nothing => self.$run::<K, false, false>(),
                    Check::Outputs => self.$run::<K, true, false>(),
                    Check::All => self.$run::<K, true, true>(),
                }
            };
        }
        match form() {
            // SAFETY: `form` is AVX-512 only where the CPU has AVX-512F.
            #[cfg(target_arch = "x86_64")]
            Form::Avx512 => unsafe { run!(run_avx512) },
            // SAFETY: `form` is AVX2 only where the CPU has AVX2.
            #[cfg(target_arch = "x86_64")]
            Form::Avx2 => unsafe { run!(run_avx2) },
            _ => run!(run_baseline),
        }
    }
}

impl RunLaw<'_> {
    /// [`RunLaw::run`] with AVX-512F enabled: 16 lanes, and on aligned
    /// tables one whole cache line per load.
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn run_avx512<K: Kind, const CHECK: bool, const INPUTS: bool>(self) -> bool {
        self.run::<K, CHECK, INPUTS>()
    }

    /// [`RunLaw::run`] for the build's own target, as a function of its
    /// own like the other forms: inlined, every kind's loop would add its
    /// stack arrays to the caller's frame (megabytes in a debug build).
    #[inline(never)]
    fn run_baseline<K: Kind, const CHECK: bool, const INPUTS: bool>(self) -> bool {
        self.run::<K, CHECK, INPUTS>()
    }

    /// [`RunLaw::run`] with AVX2 enabled.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn run_avx2<K: Kind, const CHECK: bool, const INPUTS: bool>(self) -> bool {
        self.run::<K, CHECK, INPUTS>()
    }

    /// The law of kind `K` over every element of the run. With `CHECK`,
    /// the same pass tells whether some output of the run, or with
    /// `INPUTS` some command value, may be non-finite: the sum of an
    /// element's values times zero is ±0 when all are finite and NaN when
    /// one is not (or when the sum overflows, which only sends the caller
    /// to its exact checks). A kind's probe ([`Kind::law_probed`]) stands
    /// in the sum for the command values and the value.
    /// OR-ing those bits is an integer reduction, so the loop still
    /// vectorizes, and it adds no pass over memory.
    ///
    /// A kind with state or output planes, or a table lookup
    /// ([`Kind::POS_LOOKUP`], computed for the block before its law), runs
    /// in blocks of [`STAGE`] elements, and writes state and outputs to
    /// arrays on the stack ([`Stage`]), copied out after each block: the
    /// compiler cannot tell that slices held in arrays do not overlap the
    /// ones read, and with more than a few written planes it gives up
    /// vectorizing the loop rather than test every pair at run time. A stack array overlaps nothing. The law's
    /// reads are unchecked, their bounds asserted once per block
    /// (`CpuIo::covers`): a check per read is an exit from the loop, and
    /// a loop with many exits stays one element at a time.
    #[inline(always)]
    fn run<K: Kind, const CHECK: bool, const INPUTS: bool>(self) -> bool {
        let n = self.out.len();
        let at = self.at;
        // The kind's parameter planes from this run's first element on: one
        // slice, not one per parameter, so a narrow run (one joint per env)
        // costs no per-parameter setup.
        let params = &self.params[at.min(self.params.len())..];
        // Every parameter plane of the kind holds the run: `CpuIo::param`
        // reads them without a check of its own.
        let planes = K::PARAMS.len();
        assert!(planes == 0 || (planes - 1) * self.plane + n <= params.len());
        // SAFETY (the spans): the step gives each env's rows to one thread,
        // and the run's elements of different slots or planes are disjoint.
        let state: [&[f32]; MAX_STATE] = std::array::from_fn(|k| {
            if k < K::STATE.len() {
                unsafe { self.state.span(k, at, n) }
            } else {
                &[]
            }
        });
        let mut next: [&mut [f32]; MAX_STATE] = std::array::from_fn(|k| {
            if k < K::STATE.len() {
                unsafe { self.next.span_mut(k, at, n) }
            } else {
                &mut []
            }
        });
        let inputs: [&[f32]; MAX_INPUTS] = std::array::from_fn(|k| {
            if k < K::INPUTS.len() {
                &self.inputs[self.input_planes[k] * self.plane + at..][..n]
            } else {
                &[]
            }
        });
        let mut outputs: [&mut [f32]; MAX_OUTPUTS] = std::array::from_fn(|k| {
            if k < K::OUTPUTS.len() {
                unsafe { self.outputs.span_mut(self.output_planes[k], at, n) }
            } else {
                &mut []
            }
        });
        let targets = self.targets.map(|t| &t[..n]);
        let field_target = &self.targets[self.field as usize][..n];
        let (pos, vel) = (&self.pos[..n], &self.vel[..n]);
        let data = self.data;
        let data_head = std::array::from_fn(|k| data.get(k).copied().unwrap_or(f32::NAN));
        // The loop's view from element `i` on, writing to `stage`.
        macro_rules! io {
            ($i:expr, $stage:expr, $lookup:expr) => {{
                let i = $i;
                CpuIo {
                    i: 0,
                    params: &params[i.min(params.len())..],
                    num_params: K::PARAMS.len(),
                    plane: self.plane,
                    inputs: inputs.map(|plane| &plane[i.min(plane.len())..]),
                    num_inputs: K::INPUTS.len(),
                    targets: targets.map(|t| &t[i..]),
                    field_target: &field_target[i..],
                    pos: &pos[i..],
                    vel: &vel[i..],
                    field: self.field,
                    state: state.map(|slot| &slot[i.min(slot.len())..]),
                    num_state: K::STATE.len(),
                    num_outputs: K::OUTPUTS.len(),
                    lookup: $lookup,
                    looks_up: K::POS_LOOKUP,
                    stage: $stage,
                    data,
                    data_head,
                    scale: self.scale,
                }
            }};
        }
        if K::STATE.is_empty() && K::OUTPUTS.is_empty() && !K::POS_LOOKUP {
            return law_loop::<K, CHECK, INPUTS>(io!(0, None, &[]), self.out);
        }
        let mut bits = false;
        let mut stage = Stage::new();
        // The block's [`LawIo::pos_lookup`] values, apart from `stage`: a
        // write to a slice of the stage left the compiler clearing all of it
        // (a `memset` of kilobytes) for each run.
        let mut lookup = [0.0f32; STAGE];
        let mut stage_out = [0.0f32; STAGE];
        for (b, out) in self.out.chunks_mut(STAGE).enumerate() {
            let (i, len) = (b * STAGE, out.len());
            // The law may leave a slot or plane alone: it then keeps its value.
            for (stage, state) in stage.next.iter_mut().zip(&state).take(K::STATE.len()) {
                copy_block(&mut stage[..len], as_uninit(&state[i..i + len]));
            }
            for (stage, plane) in (stage.outputs.iter_mut())
                .zip(&outputs)
                .take(K::OUTPUTS.len())
            {
                copy_block(&mut stage[..len], as_uninit(&plane[i..i + len]));
            }
            if K::POS_LOOKUP {
                lookup_limits(data, &pos[i..i + len], &mut lookup[..len]);
            }
            let io = io!(i, Some(&mut stage), &lookup);
            bits |= law_loop::<K, CHECK, INPUTS>(io, &mut stage_out[..len]);
            // SAFETY (both): the block's values of the kind's slots and
            // planes, copied in above.
            for (next, stage) in next.iter_mut().zip(&stage.next).take(K::STATE.len()) {
                copy_block(&mut next[i..i + len], unsafe { assume_init(&stage[..len]) });
            }
            for (plane, stage) in (outputs.iter_mut())
                .zip(&stage.outputs)
                .take(K::OUTPUTS.len())
            {
                copy_block(&mut plane[i..i + len], unsafe {
                    assume_init(&stage[..len])
                });
            }
            copy_block(out, &stage_out[..len]);
        }
        bits
    }
}

/// Elements per block of a staged law loop ([`RunLaw::run`]).
const STAGE: usize = 64;

/// `src` into `dst` (of the same length, at most [`STAGE`]): a whole
/// block as a copy of fixed size, which compiles to a few vector moves,
/// rather than a call into the C library's `memmove`, which a copy of a
/// length known only at run time is: MuJoCo 4's `pid` at 1024 × 12 had
/// 17 % of its profile's samples in `memmove`, 7 % so (the rest is the
/// commit's copies of whole rows).
#[inline(always)]
fn copy_block<T: Copy>(dst: &mut [T], src: &[T]) {
    match (
        <&mut [T; STAGE]>::try_from(&mut *dst),
        <&[T; STAGE]>::try_from(src),
    ) {
        (Ok(dst), Ok(src)) => *dst = *src,
        _ => dst.copy_from_slice(src),
    }
}

/// `values` as slots that may hold anything ([`Stage`]'s).
#[inline(always)]
fn as_uninit(values: &[f32]) -> &[MaybeUninit<f32>] {
    // SAFETY: `MaybeUninit<f32>` has `f32`'s layout, and any `f32` is one.
    unsafe { &*(values as *const [f32] as *const [MaybeUninit<f32>]) }
}

/// `slots` as the values they hold.
///
/// # Safety
/// Every slot was written.
#[inline(always)]
unsafe fn assume_init(slots: &[MaybeUninit<f32>]) -> &[f32] {
    // SAFETY: the layouts are the same, and the caller's.
    unsafe { &*(slots as *const [MaybeUninit<f32>] as *const [f32]) }
}

/// A block's state and output planes as a staged law writes them
/// ([`RunLaw::run`]): whole arrays, not slices, so that the compiler
/// sees where each write goes (slices of them, held in arrays, left
/// MuJoCo 4's dcmotor with more overlap checks than it would make).
///
/// Left uninitialized: a block's values of the kind's slots and planes are
/// copied in before its law runs, and nothing else is read. Zeroed, its
/// 4 KiB were a `memset` per run, which took a BAM servo group beside a
/// PD group, stepped env by env, to 5 913 instructions per env, 69 % of
/// them in `memset` (BENCHMARKS.md).
struct Stage {
    next: [[MaybeUninit<f32>; STAGE]; MAX_STATE],
    outputs: [[MaybeUninit<f32>; STAGE]; MAX_OUTPUTS],
}

impl Stage {
    /// A stage of slots not yet written.
    #[inline(always)]
    fn new() -> Stage {
        Stage {
            next: [[MaybeUninit::uninit(); STAGE]; MAX_STATE],
            outputs: [[MaybeUninit::uninit(); STAGE]; MAX_OUTPUTS],
        }
    }
}

/// The law of kind `K` at every element of `out` through `io` (see
/// [`RunLaw::run`]); with `CHECK`, whether some output (with `INPUTS`, or
/// command value) may be non-finite.
#[inline(always)]
fn law_loop<K: Kind, const CHECK: bool, const INPUTS: bool>(
    mut io: CpuIo<'_>,
    out: &mut [f32],
) -> bool {
    // `io` reads and writes element `i` without checks of its own.
    io.covers(out.len());
    let mut bits = 0u32;
    for (i, out) in out.iter_mut().enumerate() {
        io.i = i;
        let (value, probe) = K::law_probed(&mut io);
        // Checked before the store: `out` may alias what the law read, as
        // far as the compiler knows, so a check after it would load the
        // five command values again (PD at 1024 × 12 on one thread took
        // 4.6 µs so, 3.3 this way); before it, they are still in registers.
        if CHECK {
            let [pt, vt, et] = io.targets;
            // The kind's probe stands for the six values ([`Kind::law_probed`]).
            let mut sum = match probe {
                Some(probe) if INPUTS => probe,
                None if INPUTS => ((pt[i] + vt[i]) + (et[i] + io.pos[i])) + (io.vel[i] + value),
                _ => value,
            };
            for k in 0..K::OUTPUTS.len() {
                sum += io.output(k);
            }
            bits |= zeroed_bits(sum);
        }
        *out = value;
    }
    any_nonfinite(bits)
}

/// [`LawIo`] at element `i` of a run.
struct CpuIo<'a> {
    i: usize,
    /// `[slot][env][ctrl]` from the run's first element: parameter `k` of
    /// element `i` is at `k·plane + i`.
    params: &'a [f32],
    /// The kind's parameter count: `params` holds that many planes of
    /// the elements from `i` on (asserted in [`RunLaw::run`]).
    num_params: usize,
    plane: usize,
    inputs: [&'a [f32]; MAX_INPUTS],
    /// The kind's input planes.
    num_inputs: usize,
    targets: [&'a [f32]; 3],
    /// The target of `field`, chosen once for the loop.
    field_target: &'a [f32],
    pos: &'a [f32],
    vel: &'a [f32],
    field: CommandField,
    state: [&'a [f32]; MAX_STATE],
    /// The kind's state slots and output planes (constants, once the
    /// law is inlined, unlike values behind `stage`).
    num_state: usize,
    num_outputs: usize,
    /// The block's [`LawIo::pos_lookup`] values from element 0 on, for a
    /// kind that reads them ([`Kind::POS_LOOKUP`]); else empty.
    lookup: &'a [f32],
    /// Whether it does (a constant once the law is inlined).
    looks_up: bool,
    /// Where the law writes its state and outputs; `None` for a kind with
    /// neither.
    stage: Option<&'a mut Stage>,
    data: &'a [f32],
    /// The first [`DATA_HEAD`] entries of `data` (NaN past its end), read
    /// once before the loop: [`LawIo::data_at`]'s. A read of `data` in the
    /// loop is a load under a test of its length, which the compiler
    /// neither hoists nor, in AVX2 code, vectorizes: MuJoCo 4's `dcmotor`
    /// and `pid` loops, which read their switches so, ran one element at a
    /// time in their AVX2 forms, with 5× the instructions (BENCHMARKS.md).
    data_head: [f32; DATA_HEAD],
    scale: f32,
}

/// Group-data entries [`CpuIo`] holds apart from the slice (a dcmotor
/// reads five at fixed indices).
const DATA_HEAD: usize = 8;

impl CpuIo<'_> {
    /// Asserts that every slice the kind reads holds `n` elements from
    /// `i = 0` on, and its stage `n` too: the accessors then read and
    /// write element `i < n` without checks (a check per access left
    /// the loops of kinds with many of them one element at a time).
    #[inline(always)]
    fn covers(&self, n: usize) {
        let staged = self.num_state + self.num_outputs > 0;
        assert!(
            self.targets.iter().all(|t| t.len() >= n)
                && self.field_target.len() >= n
                && self.pos.len() >= n
                && self.vel.len() >= n
                && (self.inputs.iter().take(self.num_inputs)).all(|p| p.len() >= n)
                && (self.state.iter().take(self.num_state)).all(|slot| slot.len() >= n)
                && (!staged || (self.stage.is_some() && n <= STAGE))
                && (!self.looks_up || self.lookup.len() >= n)
        );
    }

    /// Output plane `k` at element `i`, as the law wrote it.
    #[inline(always)]
    fn output(&self, k: usize) -> f32 {
        assert!(k < self.num_outputs);
        let stage = self.stage.as_ref().expect("a kind with outputs is staged");
        // SAFETY: as the accessors below; the block's values of the
        // kind's planes were copied into the stage before the law ran.
        unsafe { stage.outputs[k].get_unchecked(self.i).assume_init() }
    }
}

impl LawIo for CpuIo<'_> {
    #[inline(always)]
    fn param(&self, k: usize) -> f32 {
        // A constant against a constant once the law is inlined: no check
        // is left in the loop (a check per parameter kept large laws' loops
        // one element at a time).
        assert!(k < self.num_params);
        // SAFETY: `k` is one of the kind's planes, which hold the run's
        // elements (`num_params`), and `i` is one of them.
        unsafe { *self.params.get_unchecked(k * self.plane + self.i) }
    }
    // SAFETY (the unchecked accessors): `i` is below the `n` that
    // `covers` asserted every slice and the stage hold; a slot, plane or
    // parameter index is checked against the kind's count (a constant
    // against a constant once the law is inlined).
    #[inline(always)]
    fn target(&self, field: CommandField) -> f32 {
        unsafe { *self.targets[field as usize].get_unchecked(self.i) }
    }
    #[inline(always)]
    fn pos(&self) -> f32 {
        unsafe { *self.pos.get_unchecked(self.i) }
    }
    #[inline(always)]
    fn vel(&self) -> f32 {
        unsafe { *self.vel.get_unchecked(self.i) }
    }
    #[inline(always)]
    fn field(&self) -> CommandField {
        self.field
    }
    #[inline(always)]
    fn field_target(&self) -> f32 {
        unsafe { *self.field_target.get_unchecked(self.i) }
    }
    #[inline(always)]
    fn state(&self, k: usize) -> f32 {
        assert!(k < self.num_state);
        unsafe { *self.state[k].get_unchecked(self.i) }
    }
    #[inline(always)]
    fn set_state(&mut self, k: usize, value: f32) {
        assert!(k < self.num_state);
        let stage = self.stage.as_mut().expect("a kind with state is staged");
        unsafe { stage.next[k].get_unchecked_mut(self.i).write(value) };
    }
    #[inline(always)]
    fn input(&self, k: usize) -> f32 {
        assert!(k < self.num_inputs);
        unsafe { *self.inputs[k].get_unchecked(self.i) }
    }
    #[inline(always)]
    fn set_output(&mut self, k: usize, value: f32) {
        assert!(k < self.num_outputs);
        let stage = self.stage.as_mut().expect("a kind with outputs is staged");
        unsafe { stage.outputs[k].get_unchecked_mut(self.i).write(value) };
    }
    #[inline(always)]
    fn pos_lookup(&self) -> f32 {
        assert!(self.looks_up);
        unsafe { *self.lookup.get_unchecked(self.i) }
    }
    #[inline(always)]
    fn data(&self, i: usize) -> f32 {
        // NaN past the end rather than a panic: a panic is an exit from
        // the law's loop, and loops with such exits stay one element at a
        // time (MuJoCo 4's dcmotor reads five entries per element).
        self.data.get(i).copied().unwrap_or(f32::NAN)
    }
    #[inline(always)]
    fn data_at<const I: usize>(&self) -> f32 {
        match self.data_head.get(I) {
            Some(&value) => value,
            None => self.data(I),
        }
    }
    #[inline(always)]
    fn data_len(&self) -> usize {
        self.data.len()
    }
    #[inline(always)]
    fn force_scale(&self) -> f32 {
        self.scale
    }
}
