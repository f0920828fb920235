//! Who holds a data directory. fjall lets one process open a directory at a
//! time (an OS file lock); when a second `ferrodyn serve` is refused, a person
//! needs to know which process to stop. fjall's lock does not say, so the
//! process that opens a directory writes its PID to [`PID_FILE`], and the
//! refused one reads it to word [`StorageError::InUse`].
//!
//! The file is only read after the lock was refused, so a stale file left by
//! a killed process is harmless: the next successful open overwrites it.

use std::fs;
use std::path::Path;

use crate::StorageError;

/// The file, beside fjall's own, naming the process that holds the directory.
pub const PID_FILE: &str = "ferrodyn.pid";

/// Records this process as the directory's holder. Best effort: a directory
/// we can open but not write a small file into fails on its first write.
pub(crate) fn record(dir: &Path) {
    let _ = fs::write(dir.join(PID_FILE), format!("{}\n", std::process::id()));
}

/// Removes the record at close if it still names this process.
pub(crate) fn release(dir: &Path) {
    let path = dir.join(PID_FILE);
    if holder_pid(dir) == Some(std::process::id()) {
        let _ = fs::remove_file(path);
    }
}

/// The error for a directory whose lock another process holds.
pub(crate) fn in_use(dir: &Path) -> StorageError {
    StorageError::InUse {
        dir: dir.display().to_string(),
        pid: holder_pid(dir),
    }
}

fn holder_pid(dir: &Path) -> Option<u32> {
    let text = fs::read_to_string(dir.join(PID_FILE)).ok()?;
    text.trim().parse().ok()
}
