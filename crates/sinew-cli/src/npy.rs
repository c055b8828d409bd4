//! NumPy `.npy` files (format 1.0 to write; 1.0–3.0 to read), C order,
//! little-endian: what `numpy.load` reads and `numpy.save` writes.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::CliError;

const MAGIC: &[u8] = b"\x93NUMPY";

/// An element type Sinew writes.
pub trait Element: bytemuck::Pod {
    /// NumPy's `descr`.
    const DESCR: &'static str;
}
impl Element for f32 {
    const DESCR: &'static str = "<f4";
}
impl Element for u32 {
    const DESCR: &'static str = "<u4";
}
impl Element for u8 {
    const DESCR: &'static str = "|u1";
}

fn header(descr: &str, shape: &[usize]) -> Vec<u8> {
    let dims = match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut text = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {dims}, }}");
    // Magic (6) + version (2) + length (2) + text + '\n', padded to 64 bytes.
    let total = (10 + text.len() + 1).next_multiple_of(64);
    text.extend(std::iter::repeat_n(' ', total - 10 - text.len() - 1));
    text.push('\n');
    let mut out = MAGIC.to_vec();
    out.extend([1, 0]);
    out.extend((text.len() as u16).to_le_bytes());
    out.extend(text.into_bytes());
    out
}

/// Writes an array of `shape` one chunk at a time; checks the count at the end.
pub struct Writer<T: Element> {
    file: BufWriter<File>,
    path: PathBuf,
    left: usize,
    _t: std::marker::PhantomData<T>,
}

impl<T: Element> Writer<T> {
    /// Creates the file and writes the header.
    pub fn create(path: &Path, shape: &[usize]) -> Result<Self, CliError> {
        let io = |e: std::io::Error| CliError::Io {
            path: path.to_owned(),
            message: e.to_string(),
        };
        let mut file = BufWriter::new(File::create(path).map_err(io)?);
        file.write_all(&header(T::DESCR, shape)).map_err(io)?;
        Ok(Writer {
            file,
            path: path.to_owned(),
            left: shape.iter().product(),
            _t: std::marker::PhantomData,
        })
    }

    /// Appends values in C order.
    pub fn write(&mut self, values: &[T]) -> Result<(), CliError> {
        assert!(
            values.len() <= self.left,
            "more values than the shape holds"
        );
        self.left -= values.len();
        self.file
            .write_all(bytemuck::cast_slice(values))
            .map_err(|e| CliError::Io {
                path: self.path.clone(),
                message: e.to_string(),
            })
    }

    /// Flushes; the shape must be full.
    pub fn finish(mut self) -> Result<PathBuf, CliError> {
        assert_eq!(self.left, 0, "fewer values than the shape holds");
        self.file.flush().map_err(|e| CliError::Io {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        Ok(self.path)
    }
}

/// Writes a whole array.
pub fn write<T: Element>(path: &Path, shape: &[usize], values: &[T]) -> Result<PathBuf, CliError> {
    let mut w = Writer::create(path, shape)?;
    w.write(values)?;
    w.finish()
}

/// Reads a little-endian `f4` or `f8` array in C order as f32, with its shape.
pub fn read_f32(path: &Path) -> Result<(Vec<usize>, Vec<f32>), CliError> {
    // A command file may be large, but no larger than memory.
    let limit = sinew::memory::available_bytes().unwrap_or(sinew::memory::MAX_ALLOCATION);
    let bytes = sinew::memory::read_user_file(path, limit).map_err(|message| CliError::Io {
        path: path.to_owned(),
        message,
    })?;
    parse_f32(&bytes, path)
}

/// [`read_f32`] on the file's bytes; `path` names it in errors.
pub fn parse_f32(bytes: &[u8], path: &Path) -> Result<(Vec<usize>, Vec<f32>), CliError> {
    let bad = |message: String| CliError::Npy {
        path: path.to_owned(),
        message,
    };
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err(bad("not an .npy file (no \\x93NUMPY magic)".into()));
    }
    let (len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(bad(format!("unsupported .npy version {v}"))),
    };
    let text = bytes
        .get(start..start + len)
        .and_then(|h| std::str::from_utf8(h).ok())
        .ok_or_else(|| bad("truncated header".into()))?;
    let field = |key: &str| -> Option<&str> {
        let at = text.find(&format!("'{key}':"))? + key.len() + 3;
        Some(text[at..].trim_start())
    };
    let descr = field("descr")
        .and_then(|s| s.strip_prefix('\''))
        .and_then(|s| s.split('\'').next())
        .ok_or_else(|| bad("no descr in the header".into()))?;
    if field("fortran_order").is_some_and(|s| s.starts_with("True")) {
        return Err(bad(
            "Fortran-ordered arrays are not supported; save with C order".into(),
        ));
    }
    let shape: Vec<usize> = field("shape")
        .and_then(|s| s.strip_prefix('('))
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| bad("no shape in the header".into()))?
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| bad(format!("bad shape entry `{s}`"))))
        .collect::<Result<_, _>>()?;
    // A header may announce any shape: count in checked arithmetic.
    let data_bytes = |width: usize| {
        shape
            .iter()
            .try_fold(width, |acc, &d| acc.checked_mul(d))
            .ok_or_else(|| bad(format!("shape {shape:?} holds too many elements")))
    };
    let data = &bytes[start + len..];
    let values: Vec<f32> = match descr {
        "<f4" if data.len() == data_bytes(4)? => data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect(),
        "<f8" if data.len() == data_bytes(8)? => data
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()) as f32)
            .collect(),
        "<f4" | "<f8" => {
            return Err(bad(format!(
                "{} data bytes for shape {shape:?} of {descr}",
                data.len()
            )))
        }
        other => {
            return Err(bad(format!(
                "dtype {other} is not supported; save float32 or float64"
            )))
        }
    };
    Ok((shape, values))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_64_byte_aligned_and_parses_back() {
        let dir = std::env::temp_dir().join(format!("sinew-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.npy");
        write(&path, &[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        assert_eq!(bytes.len(), 10 + header_len + 24);
        let (shape, values) = read_f32(&path).unwrap();
        assert_eq!(shape, [2, 3]);
        assert_eq!(values, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        write(&path, &[4], &[1u8, 0, 1, 0]).unwrap();
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        assert!(
            text.contains("'descr': '|u1'") && text.contains("'shape': (4,)"),
            "{text}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
