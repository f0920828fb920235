//! The checkpoint of an import: how many input records are done (written or
//! reported as not written), saved after every finished batch so that an
//! interrupted import, run again with the same command, skips exactly those
//! records. It also remembers which import it belongs to (table, file, size,
//! format) so it is never applied to a different one.

use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Checkpoint {
    pub table: String,
    /// The input file's absolute path.
    pub source: String,
    /// The input file's size when the import started (a changed file means a
    /// different import).
    pub source_bytes: u64,
    pub format: String,
    /// Input records fully handled, counted from the start of the file.
    pub records_done: u64,
    pub written: u64,
    pub not_written: u64,
    pub calls: u64,
    pub retries: u64,
    pub unprocessed_returned: u64,
    /// Runs of the command that worked on this import.
    pub runs: u32,
    /// Every record has been handled.
    pub complete: bool,
}

impl Checkpoint {
    /// Reads a checkpoint; `None` if the file does not exist.
    pub fn load(path: &Path) -> Result<Option<Checkpoint>, String> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
                format!(
                    "checkpoint {} is unreadable ({e}); delete it to start over",
                    path.display()
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("cannot read checkpoint {}: {e}", path.display())),
        }
    }

    /// Whether this checkpoint was made by the same import.
    pub fn same_import(&self, other: &Checkpoint) -> bool {
        self.table == other.table
            && self.source == other.source
            && self.source_bytes == other.source_bytes
            && self.format == other.format
    }

    /// Writes atomically (temporary file, then rename), so a kill in the
    /// middle leaves the previous checkpoint intact.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let temporary = path.with_extension("tmp");
        let text = serde_json::to_string_pretty(self).expect("plain data always serialises");
        std::fs::write(&temporary, text)
            .and_then(|_| std::fs::rename(&temporary, path))
            .map_err(|e| format!("cannot save checkpoint {}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_checkpoint_loads_back_and_knows_its_import() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("import.checkpoint");
        assert_eq!(Checkpoint::load(&path).unwrap(), None);
        let checkpoint = Checkpoint {
            table: "t".into(),
            source: "/data/items.jsonl".into(),
            source_bytes: 10,
            format: "jsonl".into(),
            records_done: 500,
            written: 498,
            not_written: 2,
            calls: 20,
            retries: 1,
            unprocessed_returned: 3,
            runs: 1,
            complete: false,
        };
        checkpoint.save(&path).unwrap();
        let loaded = Checkpoint::load(&path).unwrap().unwrap();
        assert_eq!(loaded, checkpoint);
        let other_file = Checkpoint {
            source_bytes: 11,
            ..checkpoint.clone()
        };
        assert!(!loaded.same_import(&other_file));
        assert!(loaded.same_import(&Checkpoint {
            records_done: 0,
            ..checkpoint
        }));
    }
}
