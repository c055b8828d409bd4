//! Memory guards: a plan, a file or a command that would need more memory
//! than the machine can give is refused with [`Error::TooLarge`] before
//! anything is allocated, instead of aborting the process or waking the
//! kernel's out-of-memory killer.

use crate::error::Error;

/// The most bytes one allocation may take (`isize::MAX`, Rust's own limit).
pub const MAX_ALLOCATION: u64 = isize::MAX as u64;

/// Bytes this process can still allocate without swapping, when the system
/// says: Linux's `MemAvailable`, lowered to the cgroup's `memory.max` when
/// the process runs under a limit. `None` where neither can be read.
pub fn available_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            kib.checked_mul(1024)
        });
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|text| text.trim().parse::<u64>().ok());
    match (meminfo, cgroup) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Checks that `bytes` (`None` when the count overflowed) can be allocated:
/// at most [`MAX_ALLOCATION`] and at most [`available_bytes`]. `group`,
/// `field` and `value` name what asked for it in the error.
pub fn check_bytes(
    group: &str,
    field: &str,
    value: impl std::fmt::Display,
    bytes: Option<u64>,
) -> Result<(), Error> {
    let available = available_bytes();
    let limit = available.map_or(MAX_ALLOCATION, |a| a.min(MAX_ALLOCATION));
    match bytes {
        Some(b) if b <= limit => Ok(()),
        _ => Err(Error::TooLarge {
            group: group.to_owned(),
            field: field.to_owned(),
            value: value.to_string(),
            bytes,
            available,
        }),
    }
}

/// `a × b × … × 4` bytes of `f32`s, `None` on overflow.
pub fn f32_bytes(dims: &[usize]) -> Option<u64> {
    dims.iter()
        .try_fold(4u64, |acc, &d| acc.checked_mul(u64::try_from(d).ok()?))
}

/// Reads a file a user named, refusing what is not a regular file (a FIFO
/// or a device would block or never end) and files over `limit` bytes. The
/// message says why, for the caller's own error.
pub fn read_user_file(path: &std::path::Path, limit: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err(if meta.is_dir() {
            "is a directory, not a file".to_owned()
        } else {
            "is not a regular file (a FIFO, socket or device?)".to_owned()
        });
    }
    let too_big = |size: u64| format!("is {size} bytes, more than the {limit} such a file may be");
    if meta.len() > limit {
        return Err(too_big(meta.len()));
    }
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    // A file that grows while read stops at the limit too.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > limit {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_and_the_allocation_limit_are_refused() {
        assert_eq!(f32_bytes(&[2, 3]), Some(24));
        assert_eq!(f32_bytes(&[usize::MAX, 2]), None);
        let err = check_bytes("g", "num_envs", usize::MAX, None).unwrap_err();
        assert!(err.to_string().contains("more than 2^64"), "{err}");
        let err = check_bytes("g", "num_envs", 1, Some(MAX_ALLOCATION + 1)).unwrap_err();
        assert!(matches!(err, Error::TooLarge { .. }), "{err}");
        check_bytes("g", "num_envs", 1, Some(1024)).unwrap();
    }

    #[test]
    fn user_files_are_regular_and_bounded() {
        let dir = std::env::temp_dir();
        assert!(read_user_file(&dir, 10).unwrap_err().contains("directory"));
        #[cfg(unix)]
        assert!(read_user_file(std::path::Path::new("/dev/zero"), 10)
            .unwrap_err()
            .contains("not a regular file"));
        let path = dir.join(format!("sinew-memory-test-{}", std::process::id()));
        std::fs::write(&path, [1u8; 11]).unwrap();
        assert!(read_user_file(&path, 10).unwrap_err().contains("11 bytes"));
        assert_eq!(read_user_file(&path, 11).unwrap().len(), 11);
        std::fs::remove_file(&path).unwrap();
    }
}
