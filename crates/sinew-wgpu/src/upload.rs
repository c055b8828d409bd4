//! The command's way to the device: host-visible buffers the step fills and
//! copies from in its own submission.
//!
//! `Queue::write_buffer` allocates fresh staging memory for every call (on
//! a discrete GPU, pinned host memory: 38 MB a step at 65536 envs × 29
//! targets) and fills it from the calling thread alone. For a command past
//! 64 KiB these buffers stay allocated, are used in turns (so a step waits
//! only if the device has not yet copied out of the buffer it needs, two
//! steps on), and past 1 MiB are written by rayon's threads (as a large
//! readback is read).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rayon::prelude::*;
use sinew_core::{Error, Source};

/// Buffers used in turns: a step fills one while the device may still be
/// copying out of the other.
const SLOTS: usize = 2;
/// Bytes one thread copies at a time.
const CHUNK_BYTES: usize = 256 * 1024;
/// Command buffers up to this size take `queue.write_buffer`. On lavapipe (2
/// cores), PD at 64 × 29 (a 37 KB command) stepped in 307–346 µs that way
/// and 340–404 through these buffers, which map and unmap every step; at
/// 256 × 29 (148 KB) 710–757 against 566–698, at 1024 × 29 1351–1456
/// against 1155–1202 (alternating rounds of `sinew bench`).
const RING_BYTES: usize = 64 << 10;
/// Commands and readbacks up to this size are copied by one thread: waking
/// rayon's threads costs more than the copy.
const SERIAL_BYTES: usize = 1 << 20;

/// The command upload path of one backend.
pub(crate) struct Upload {
    /// [`SLOTS`] buffers, or none for a command up to [`RING_BYTES`].
    slots: Vec<Slot>,
    next: usize,
}

struct Slot {
    buffer: wgpu::Buffer,
    /// Set by the map callback when `buffer` is mapped for writing.
    mapped: Arc<AtomicBool>,
    /// The submission that copies out of `buffer`, while its map waits.
    pending: Option<wgpu::SubmissionIndex>,
}

impl Upload {
    /// Two buffers of `bytes` each, mapped and ready to fill; none where
    /// `bytes` is at most [`RING_BYTES`] (such a command takes
    /// `queue.write_buffer`).
    pub(crate) fn new(device: &wgpu::Device, bytes: u64) -> Upload {
        let slot = |_| Slot {
            buffer: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("sinew command upload"),
                size: bytes.max(wgpu::COPY_BUFFER_ALIGNMENT),
                usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: true,
            }),
            mapped: Arc::new(AtomicBool::new(true)),
            pending: None,
        };
        let count = if bytes > RING_BYTES as u64 { SLOTS } else { 0 };
        Upload {
            slots: (0..count).map(slot).collect(),
            next: 0,
        }
    }

    /// Writes each of `fields`, `stride` bytes apart, into `dst` from byte
    /// 0 before `encoder`'s commands run: through `queue.write_buffer` where
    /// the command buffer is at most [`RING_BYTES`], else into the next
    /// buffer here, with its copy recorded on `encoder`. Call
    /// [`Upload::submitted`] with the submission of `encoder`.
    pub(crate) fn stage(
        &mut self,
        (device, queue): (&wgpu::Device, &wgpu::Queue),
        encoder: &mut wgpu::CommandEncoder,
        fields: &[&[f32]],
        stride: usize,
        dst: &wgpu::Buffer,
    ) -> Result<(), Error> {
        if self.slots.is_empty() {
            for (f, field) in fields.iter().enumerate() {
                if !field.is_empty() {
                    queue.write_buffer(dst, (f * stride) as u64, bytemuck::cast_slice(field));
                }
            }
            return Ok(());
        }
        let slot = &mut self.slots[self.next];
        if !slot.mapped.load(Ordering::Acquire) {
            if slot.pending.is_none() {
                slot.request_map();
            }
            let submission_index = slot.pending.take();
            device
                .poll(wgpu::PollType::Wait {
                    submission_index,
                    timeout: None,
                })
                .map_err(upload_error)?;
            if !slot.mapped.load(Ordering::Acquire) {
                return Err(Error::Gpu {
                    what: "upload",
                    message: "the command's upload buffer could not be mapped".into(),
                    source: None,
                });
            }
        }
        let total: usize = fields.iter().map(|f| f.len() * 4).sum();
        let end = (fields.len().saturating_sub(1) * stride
            + fields.last().map_or(0, |f| f.len() * 4)) as u64;
        let bytes = end.next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        {
            let mut view = slot
                .buffer
                .get_mapped_range_mut(..bytes)
                .map_err(upload_error)?;
            for (f, field) in fields.iter().enumerate() {
                let src = bytemuck::cast_slice::<f32, u8>(field);
                let mut piece = view.slice(f * stride..f * stride + src.len());
                if total <= SERIAL_BYTES {
                    piece.copy_from_slice(src);
                } else {
                    copy_piece(Piece(piece, src));
                }
            }
        }
        slot.buffer.unmap();
        slot.mapped.store(false, Ordering::Release);
        encoder.copy_buffer_to_buffer(&slot.buffer, 0, dst, 0, bytes);
        Ok(())
    }

    /// Maps the buffer [`Upload::stage`] filled again once `submission`
    /// (the one that copies out of it) is done, and turns to the next.
    pub(crate) fn submitted(&mut self, submission: wgpu::SubmissionIndex) {
        let Some(slot) = self.slots.get_mut(self.next) else {
            return;
        };
        slot.pending = Some(submission);
        slot.request_map();
        self.next = (self.next + 1) % SLOTS;
    }
}

impl Slot {
    fn request_map(&self) {
        let mapped = self.mapped.clone();
        self.buffer
            .slice(..)
            .map_async(wgpu::MapMode::Write, move |r| {
                mapped.store(r.is_ok(), Ordering::Release);
            });
    }
}

/// `dst.copy_from_slice(src)`, by rayon's threads when large (a readback
/// of a mapped buffer).
pub(crate) fn copy_bytes(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len());
    if dst.len() <= SERIAL_BYTES {
        dst.copy_from_slice(src);
    } else {
        (dst.par_chunks_mut(CHUNK_BYTES)
            .zip(src.par_chunks(CHUNK_BYTES)))
        .for_each(|(d, s)| d.copy_from_slice(s));
    }
}

/// A piece of a mapped buffer and the bytes it takes.
struct Piece<'a>(wgpu::WriteOnly<'a, [u8]>, &'a [u8]);

// SAFETY: a `WriteOnly<[u8]>` is a unique pointer to the bytes it may write,
// like `&mut [u8]`, which is `Send`; wgpu implements `Send` for
// `WriteOnly<T>` with `T: Send` and an implicit `T: Sized`, which leaves
// slices out. The pieces do not overlap (one field's range of the view,
// halved by `split_at`), and the mapping outlives them (`copy_piece`
// returns once every half is written, before the view is dropped).
unsafe impl Send for Piece<'_> {}

/// Copies a piece's bytes into it: halves on rayon's threads (by
/// `rayon::join`, nothing allocated) down to [`CHUNK_BYTES`].
fn copy_piece(Piece(mut piece, src): Piece<'_>) {
    if src.len() <= CHUNK_BYTES {
        piece.copy_from_slice(src);
        return;
    }
    let half = src.len() / 2;
    let (low, high) = piece.split_at(half);
    let (src_low, src_high) = src.split_at(half);
    let (low, high) = (Piece(low, src_low), Piece(high, src_high));
    rayon::join(move || copy_piece(low), move || copy_piece(high));
}

/// A failed map or wait of an upload buffer.
fn upload_error(e: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::Gpu {
        what: "upload",
        message: e.to_string(),
        source: Some(Source::new(e)),
    }
}
