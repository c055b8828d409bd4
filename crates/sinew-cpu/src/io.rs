//! The CPU side of the kind spec: [`LawIo`] over one run's slices, and the
//! dispatch that monomorphizes each kind's law into its own loop.

use sinew_core::{CommandField, Kind, KindVisitor, LawIo, MAX_INPUTS, MAX_OUTPUTS, MAX_STATE};

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

    /// `len` values of slot `slot` from env `env`'s column `at`.
    ///
    /// # Safety
    /// No other thread writes this env's rows while the slice lives.
    #[inline(always)]
    pub unsafe fn read(&self, slot: usize, env: usize, at: usize, len: usize) -> &[f32] {
        assert!(slot < self.slots && env < self.num_envs && at + len <= self.num_ctrl);
        let start = (slot * self.num_envs + env) * self.num_ctrl + at;
        // SAFETY: in bounds (asserted); the caller owns the env.
        unsafe { std::slice::from_raw_parts(self.ptr.add(start), len) }
    }

    /// Copies env `env`'s rows of every slot into `out` (`[slot][ctrl]`).
    ///
    /// # Safety
    /// No other thread touches this env's rows meanwhile.
    pub unsafe fn copy_env_to(&self, env: usize, out: &mut [f32]) {
        for (k, row) in out.chunks_exact_mut(self.num_ctrl).enumerate() {
            // SAFETY: forwarded.
            row.copy_from_slice(unsafe { self.read(k, env, 0, self.num_ctrl) });
        }
    }

    /// Copies `rows` (`[slot][ctrl]`) into env `env`'s rows of every slot.
    ///
    /// # Safety
    /// No other thread touches this env's rows meanwhile.
    pub unsafe fn copy_env_from(&self, env: usize, rows: &[f32]) {
        for (k, row) in rows.chunks_exact(self.num_ctrl).enumerate() {
            assert!(k < self.slots && env < self.num_envs);
            let start = (k * self.num_envs + env) * self.num_ctrl;
            // SAFETY: in bounds (asserted); the caller owns the env.
            let dst = unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start), self.num_ctrl) };
            dst.copy_from_slice(row);
        }
    }
}

/// One run of one kind's law, as a [`KindVisitor`]: the visit is the loop.
pub(crate) struct RunLaw<'a> {
    /// `[slot][env][ctrl]`.
    pub params: &'a [f32],
    /// `num_envs × num_ctrl`.
    pub plane: usize,
    /// The run's first element in a parameter plane.
    pub at: usize,
    /// The state table; read at `env` (the single-env path only).
    pub state: SlotRows,
    pub env: usize,
    pub targets: [&'a [f32]; 3],
    pub pos: &'a [f32],
    pub vel: &'a [f32],
    pub field: CommandField,
    /// `[plane][env][target]`: every input plane.
    pub inputs: &'a [f32],
    /// The run's first element in an input plane.
    pub input_at: usize,
    /// `num_envs × num_targets`.
    pub input_plane: usize,
    /// The kind's inputs' and outputs' planes in the plan.
    pub input_planes: &'a [usize],
    pub output_planes: &'a [usize],
    /// The env's output row, `[plane][ctrl]` (empty without outputs).
    pub outputs: &'a mut [f32],
    pub data: &'a [f32],
    pub out: &'a mut [f32],
    /// The env's next-state row, `[slot][ctrl]` (empty without state).
    pub next: &'a mut [f32],
    /// The run's first column in `next`'s rows.
    pub next_at: usize,
    pub num_ctrl: usize,
    /// [`LawIo::force_scale`].
    pub scale: f32,
    /// Whether the loop also checks the run's five command values and its
    /// output for non-finite ones (the visit's result).
    pub check: bool,
}

/// The exponent bits of an `f32`: all set for NaN and ±inf.
pub(crate) const EXP_BITS: u32 = 0x7f80_0000;

impl KindVisitor for RunLaw<'_> {
    /// With [`RunLaw::check`]: true when some value checked may be
    /// non-finite (see [`RunLaw::run`]); else false.
    type Output = bool;

    /// The run's loop, compiled a second time for AVX2 and taken when the
    /// CPU has it. No FMA is enabled (and Rust never contracts `a·b + c`
    /// by itself), so both loops give the same bits.
    #[inline(always)]
    fn visit<K: Kind>(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe {
                if self.check {
                    self.run_avx2::<K, true>()
                } else {
                    self.run_avx2::<K, false>()
                }
            };
        }
        if self.check {
            self.run::<K, true>()
        } else {
            self.run::<K, false>()
        }
    }
}

impl RunLaw<'_> {
    /// [`RunLaw::run`] with AVX2 enabled.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn run_avx2<K: Kind, const CHECK: bool>(self) -> bool {
        self.run::<K, CHECK>()
    }

    /// The law of kind `K` over every element of the run. With `CHECK`,
    /// the same pass tells whether some command value or output of the
    /// run may be non-finite: the sum of an element's six values times
    /// zero is ±0 when all are finite and NaN when one is not (or when the
    /// sum overflows, which only sends the caller to its exact checks).
    /// OR-ing those bits is an integer reduction, so the loop still
    /// vectorizes, and it adds no pass over memory.
    #[inline(always)]
    fn run<K: Kind, const CHECK: bool>(self) -> bool {
        let n = self.out.len();
        // The kind's parameter planes from this run's first element on: one
        // slice, not one per parameter, so a narrow run (one joint per env)
        // costs no per-parameter setup.
        let params = &self.params[self.at.min(self.params.len())..];
        let state: [&[f32]; MAX_STATE] = std::array::from_fn(|k| {
            if k < K::STATE.len() {
                // SAFETY: the step gives each env's rows to one thread.
                unsafe { self.state.read(k, self.env, self.next_at, n) }
            } else {
                &[]
            }
        });
        let inputs: [&[f32]; MAX_INPUTS] = std::array::from_fn(|k| {
            if k < K::INPUTS.len() {
                &self.inputs[self.input_planes[k] * self.input_plane + self.input_at..][..n]
            } else {
                &[]
            }
        });
        let outputs: [usize; MAX_OUTPUTS] = std::array::from_fn(|k| {
            if k < K::OUTPUTS.len() {
                self.output_planes[k] * self.num_ctrl + self.next_at
            } else {
                0
            }
        });
        let checked = (
            self.targets.map(|t| &t[..n]),
            &self.pos[..n],
            &self.vel[..n],
        );
        let mut io = CpuIo {
            i: 0,
            params,
            plane: self.plane,
            inputs: &inputs,
            outputs: &outputs,
            output_row: self.outputs,
            targets: self.targets.map(|t| &t[..n]),
            pos: &self.pos[..n],
            vel: &self.vel[..n],
            field: self.field,
            state: &state,
            next: self.next,
            next_at: self.next_at,
            num_ctrl: self.num_ctrl,
            data: self.data,
            scale: self.scale,
        };
        let mut bits = 0u32;
        for (i, out) in self.out.iter_mut().enumerate() {
            io.i = i;
            let value = K::law(&mut io);
            *out = value;
            if CHECK {
                let ([pt, vt, et], pos, vel) = checked;
                let sum = ((pt[i] + vt[i]) + (et[i] + pos[i])) + (vel[i] + value);
                bits |= (sum * 0.0).to_bits();
            }
        }
        bits & EXP_BITS == EXP_BITS
    }
}

/// [`LawIo`] at element `i` of a run.
struct CpuIo<'a, 'b> {
    i: usize,
    /// `[slot][env][ctrl]` from the run's first element: parameter `k` of
    /// element `i` is at `k·plane + i`.
    params: &'a [f32],
    plane: usize,
    inputs: &'b [&'a [f32]; MAX_INPUTS],
    /// Where each output's run starts in `output_row`.
    outputs: &'b [usize; MAX_OUTPUTS],
    output_row: &'b mut [f32],
    targets: [&'a [f32]; 3],
    pos: &'a [f32],
    vel: &'a [f32],
    field: CommandField,
    state: &'b [&'a [f32]; MAX_STATE],
    next: &'b mut [f32],
    next_at: usize,
    num_ctrl: usize,
    data: &'a [f32],
    scale: f32,
}

impl LawIo for CpuIo<'_, '_> {
    #[inline(always)]
    fn param(&self, k: usize) -> f32 {
        self.params[k * self.plane + self.i]
    }
    #[inline(always)]
    fn target(&self, field: CommandField) -> f32 {
        self.targets[field as usize][self.i]
    }
    #[inline(always)]
    fn pos(&self) -> f32 {
        self.pos[self.i]
    }
    #[inline(always)]
    fn vel(&self) -> f32 {
        self.vel[self.i]
    }
    #[inline(always)]
    fn field(&self) -> CommandField {
        self.field
    }
    #[inline(always)]
    fn state(&self, k: usize) -> f32 {
        self.state[k][self.i]
    }
    #[inline(always)]
    fn set_state(&mut self, k: usize, value: f32) {
        self.next[k * self.num_ctrl + self.next_at + self.i] = value;
    }
    #[inline(always)]
    fn input(&self, k: usize) -> f32 {
        self.inputs[k][self.i]
    }
    #[inline(always)]
    fn set_output(&mut self, k: usize, value: f32) {
        self.output_row[self.outputs[k] + self.i] = value;
    }
    #[inline(always)]
    fn data(&self, i: usize) -> f32 {
        self.data[i]
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
