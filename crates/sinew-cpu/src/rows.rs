//! A caller's per-env tables cut into parts of whole env rows, run on the
//! threads that step them ([`crate::CpuBackend::par_rows_mut`]) or through
//! rayon ([`crate::par_rows_mut`]).

use std::ops::Range;
use std::sync::{Mutex, PoisonError};

use rayon::prelude::*;
use sinew_core::Error;

use crate::pool;

/// One part: its envs and its rows of each table.
type Part<'a, const N: usize> = (Range<usize>, [&'a mut [f32]; N]);

/// `tables` (each `num_envs` rows of its own width) cut into parts of
/// `chunk` envs, the last shorter, as they are taken; [`Error::RowsShape`]
/// for a table that is not whole rows.
fn cut<const N: usize>(
    tables: [&mut [f32]; N],
    num_envs: usize,
    chunk: usize,
) -> Result<impl Iterator<Item = Part<'_, N>>, Error> {
    let num_envs = num_envs.max(1);
    let mut widths = [0; N];
    for (table, (rows, width)) in tables.iter().zip(&mut widths).enumerate() {
        if rows.len() % num_envs != 0 {
            return Err(Error::RowsShape {
                table,
                got: rows.len(),
                num_envs,
            });
        }
        *width = rows.len() / num_envs;
    }
    let mut rest = tables;
    let chunk = chunk.max(1);
    Ok((0..num_envs).step_by(chunk).map(move |start| {
        let envs = start..(start + chunk).min(num_envs);
        let rows = std::array::from_fn(|i| {
            let (part, tail) = std::mem::take(&mut rest[i]).split_at_mut(envs.len() * widths[i]);
            rest[i] = tail;
            part
        });
        (envs, rows)
    }))
}

/// Even parts for `parts` threads, each a multiple of 16 envs (so that
/// its rows start on a cache line).
pub(crate) fn split(num_envs: usize, parts: usize) -> usize {
    num_envs.div_ceil(parts.max(1)).next_multiple_of(16)
}

/// How [`run`] hands out the parts.
pub(crate) enum Placement {
    /// All rows as one part on the calling thread.
    Here,
    /// Part `i` on the step pool's worker `i` ([`pool::fan_out`]).
    Workers(usize),
    /// Parts of this many envs through rayon's join in the step pool
    /// ([`pool::install`]).
    Pool(usize),
    /// Parts of this many envs through rayon's join in the pool this thread
    /// would use anyway (the global one, or the one it runs in).
    Rayon(usize),
}

/// Runs `op` on each part of `tables` once, as `placement` says.
pub(crate) fn run<const N: usize>(
    tables: [&mut [f32]; N],
    num_envs: usize,
    placement: Placement,
    op: &(impl Fn(Range<usize>, [&mut [f32]; N]) + Sync),
) -> Result<(), Error> {
    let chunk = match placement {
        Placement::Here => num_envs,
        Placement::Workers(chunk) | Placement::Pool(chunk) | Placement::Rayon(chunk) => chunk,
    };
    let mut parts = cut(tables, num_envs, chunk)?;
    let each = |(envs, rows): Part<'_, N>| op(envs, rows);
    match placement {
        Placement::Here => parts.for_each(each),
        Placement::Workers(_) => {
            // At most one part per worker, handed over without an allocation.
            let mut slots: [Mutex<Option<Part<'_, N>>>; pool::MAX_PARTS] =
                std::array::from_fn(|_| Mutex::new(None));
            let mut count = 0;
            for (slot, part) in slots.iter_mut().zip(&mut parts) {
                *slot.get_mut().unwrap_or_else(PoisonError::into_inner) = Some(part);
                count += 1;
            }
            assert!(parts.next().is_none(), "more parts than workers");
            pool::fan_out(count, &|i| {
                let part = slots[i]
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take();
                part.map(each);
                0
            });
        }
        Placement::Pool(_) => {
            let parts: Vec<_> = parts.collect();
            pool::install(|| parts.into_par_iter().for_each(each));
        }
        Placement::Rayon(_) => parts.collect::<Vec<_>>().into_par_iter().for_each(each),
    }
    Ok(())
}
