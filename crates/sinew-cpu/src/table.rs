//! [`Table`]: the backend's own f32 tables, each starting on a cache line.

use std::ops::{Deref, DerefMut};

/// One 64-byte cache line of values.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(64))]
struct Line([f32; 16]);

/// A table of `f32`s whose first value starts a cache line: with rows
/// split at multiples of 16 values, a step's vector loads then never
/// straddle two lines. The hand-written C loop's arrays are aligned so;
/// moved 16 bytes into a line, where `Vec<f32>`'s large allocations start,
/// that loop took 10–25 % longer.
#[derive(Debug, Clone, Default)]
pub(crate) struct Table {
    lines: Vec<Line>,
    len: usize,
}

impl Table {
    /// `len` zeros.
    pub fn zeros(len: usize) -> Table {
        Table {
            lines: vec![Line::default(); len.div_ceil(16)],
            len,
        }
    }

    /// Grows or shrinks to `len` values, new ones 0.
    pub fn resize(&mut self, len: usize) {
        let old = self.len;
        self.lines.resize(len.div_ceil(16), Line::default());
        self.len = len;
        if len > old {
            self[old..].fill(0.0);
        }
    }
}

impl Deref for Table {
    type Target = [f32];
    fn deref(&self) -> &[f32] {
        // SAFETY: `Line` is 16 `f32`s with no padding (size 64, align 64),
        // so the lines are `16 · lines.len() ≥ len` contiguous values.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr().cast(), self.len) }
    }
}

impl DerefMut for Table {
    fn deref_mut(&mut self) -> &mut [f32] {
        // SAFETY: as in `deref`, borrowed mutably.
        unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr().cast(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_start_on_a_cache_line_and_keep_their_values() {
        for len in [0, 1, 15, 16, 17, 1000] {
            let values: Vec<f32> = (0..len).map(|i| i as f32).collect();
            let mut table = Table::zeros(len);
            table.copy_from_slice(&values);
            assert_eq!(&table[..], &values[..]);
            assert_eq!(table.as_ptr() as usize % 64, 0);
            table.resize(len + 20);
            assert_eq!(&table[..len], &values[..]);
            assert!(table[len..].iter().all(|&v| v == 0.0));
            table.resize(len / 2);
            assert_eq!(&table[..], &values[..len / 2]);
        }
    }
}
