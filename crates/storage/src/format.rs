//! The data directory's format version: a small text file, `FERRODYN_FORMAT`,
//! beside fjall's own files, saying which layout of Ferrodyn's keys and values
//! the directory holds. It is checked before fjall opens anything, so a
//! directory written by a newer Ferrodyn (or something that is not a Ferrodyn
//! directory at all) is refused with a clear error instead of being misread.
//!
//! Bump [`DATA_FORMAT`] whenever the engine's key layout or value encoding
//! changes in a way older code cannot read, and teach `check_or_create` how to
//! upgrade the previous version.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use crate::StorageError;

/// The format this build reads and writes.
pub const DATA_FORMAT: u32 = 1;

/// The marker file's name.
pub const FORMAT_FILE: &str = "FERRODYN_FORMAT";

/// The file's text: a tag naming the file, then the version.
fn marker_text(version: u32) -> String {
    format!("ferrodyn-data-format {version}\n")
}

/// Checks the directory's format, creating the marker in a new directory.
///
/// A directory with fjall data and no marker was written before versions
/// were recorded: that layout is format 1, so the marker is added.
pub fn check_or_create(dir: &Path) -> Result<(), StorageError> {
    let path = dir.join(FORMAT_FILE);
    match fs::read_to_string(&path) {
        Ok(text) => check_marker(dir, &text),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            refuse_foreign_directory(dir)?;
            fs::create_dir_all(dir)?;
            write_marker(dir, DATA_FORMAT)
        }
        Err(e) => Err(StorageError::Io(e)),
    }
}

fn check_marker(dir: &Path, text: &str) -> Result<(), StorageError> {
    let version = text
        .strip_prefix("ferrodyn-data-format ")
        .and_then(|v| v.trim().parse::<u32>().ok());
    match version {
        Some(DATA_FORMAT) => Ok(()),
        Some(v) if v > DATA_FORMAT => Err(StorageError::Format(format!(
            "{} was written by a newer Ferrodyn (data format {v}); this Ferrodyn reads format \
             {DATA_FORMAT}: upgrade Ferrodyn, or choose another --data-dir",
            dir.display()
        ))),
        _ => Err(StorageError::Format(format!(
            "{} has an unknown data format ({FORMAT_FILE} says {:?}); this Ferrodyn reads format \
             {DATA_FORMAT}",
            dir.display(),
            text.trim()
        ))),
    }
}

/// A directory that holds files but neither our marker nor fjall's own
/// `version` file is somebody else's: refuse rather than write into it.
fn refuse_foreign_directory(dir: &Path) -> Result<(), StorageError> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(()); // missing: it will be created
    };
    let has_files = entries.flatten().next().is_some();
    if has_files && !dir.join("version").exists() {
        return Err(StorageError::Format(format!(
            "{} is not empty and is not a Ferrodyn data directory; choose an empty or new --data-dir",
            dir.display()
        )));
    }
    Ok(())
}

/// Writes the marker through a temporary file and a rename, so a crash
/// leaves either no marker or a whole one.
fn write_marker(dir: &Path, version: u32) -> Result<(), StorageError> {
    let tmp = dir.join(format!("{FORMAT_FILE}.tmp"));
    let mut file = fs::File::create(&tmp)?;
    file.write_all(marker_text(version).as_bytes())?;
    file.sync_all()?;
    fs::rename(&tmp, dir.join(FORMAT_FILE))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_directory_gets_the_current_format() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        check_or_create(&data).unwrap();
        let text = fs::read_to_string(data.join(FORMAT_FILE)).unwrap();
        assert_eq!(text, marker_text(DATA_FORMAT));
        check_or_create(&data).unwrap();
    }

    #[test]
    fn a_newer_format_is_refused_with_its_version() {
        let dir = tempfile::tempdir().unwrap();
        write_marker(dir.path(), DATA_FORMAT + 1).unwrap();
        let err = check_or_create(dir.path()).unwrap_err().to_string();
        assert!(err.contains("newer Ferrodyn (data format 2)"), "{err}");
    }

    #[test]
    fn an_unreadable_marker_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(FORMAT_FILE), "garbage").unwrap();
        let err = check_or_create(dir.path()).unwrap_err().to_string();
        assert!(err.contains("unknown data format"), "{err}");
    }

    #[test]
    fn a_foreign_non_empty_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("notes.txt"), "mine").unwrap();
        let err = check_or_create(dir.path()).unwrap_err().to_string();
        assert!(err.contains("not a Ferrodyn data directory"), "{err}");
        assert!(!dir.path().join(FORMAT_FILE).exists());
    }
}
