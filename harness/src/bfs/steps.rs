//! Each state's parent and step, for counterexamples, on disk as TLC keeps its trace file. TLC's
//! `tlc2.tool.TLCTrace` writes 12 bytes a state to its `.st` file, the predecessor's place in the file and
//! the state's fingerprint, and rebuilds a trace by making every successor of each predecessor and keeping
//! the one whose fingerprint matches. Here a record is six bytes, the parent's number and the place of the
//! step among the parent's actions, and a counterexample is rebuilt by replaying those steps from the
//! initial state ([`super::path`]): no search among successors.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::os::unix::fs::FileExt;

/// The bytes of one record: the parent's number (u32) and the step's place among its actions (u16).
const RECORD: usize = 6;
/// Records gathered in memory before they are written out: 48 KiB, a write every 8,192 states (a search
/// makes some 10^5 a second), so that the memory they take is nothing beside the fingerprints'.
const BUFFER: usize = RECORD * (1 << 13);

/// The records of a search, state by state in BFS order: on disk in a file with no name (removed as
/// soon as it is made, so that nothing is left behind, whatever ends the process), the newest in memory.
/// Where no such file can be made or written, all of it stays in memory.
#[derive(Debug)]
pub struct Steps {
    file: Option<File>,
    /// Records not yet written out.
    buffer: Vec<u8>,
    /// Records written out.
    written: usize,
}

impl Steps {
    pub fn new() -> Self {
        Steps { file: tempfile::tempfile().ok(), buffer: Vec::new(), written: 0 }
    }

    /// States recorded.
    pub fn len(&self) -> usize {
        self.written + self.buffer.len() / RECORD
    }

    /// The bytes held in memory.
    pub fn memory_bytes(&self) -> u64 {
        self.buffer.capacity() as u64
    }

    /// The bytes on disk.
    pub fn disk_bytes(&self) -> u64 {
        if self.file.is_some() {
            (self.written * RECORD) as u64
        } else {
            0
        }
    }

    /// Records the next state: its parent's number and the place of its step among the parent's actions.
    pub fn push(&mut self, parent: u32, step: u16) {
        self.buffer.extend_from_slice(&parent.to_le_bytes());
        self.buffer.extend_from_slice(&step.to_le_bytes());
        if self.buffer.len() >= BUFFER {
            self.write_out();
        }
    }

    /// State `id`'s parent and step.
    pub fn get(&self, id: u32) -> (u32, u16) {
        let id = id as usize;
        let mut record = [0; RECORD];
        if id >= self.written {
            let at = (id - self.written) * RECORD;
            record.copy_from_slice(&self.buffer[at..at + RECORD]);
        } else if let Some(file) = &self.file {
            // A file that cannot be read back is beyond repair: the trace is lost with it.
            file.read_exact_at(&mut record, (id * RECORD) as u64)
                .unwrap_or_else(|e| panic!("the search's trace file cannot be read back: {e}"));
        }
        decode(&record)
    }

    /// The records of states `ids`, in order: those on disk in one read.
    pub fn records(&self, ids: Range<u32>) -> Vec<(u32, u16)> {
        let (start, end) = (ids.start as usize, ids.end as usize);
        let mut bytes = vec![0; (end - start) * RECORD];
        let on_disk = self.written.clamp(start, end) - start;
        if let (Some(file), true) = (&self.file, on_disk > 0) {
            file.read_exact_at(&mut bytes[..on_disk * RECORD], (start * RECORD) as u64)
                .unwrap_or_else(|e| panic!("the search's trace file cannot be read back: {e}"));
        }
        let from = (start + on_disk).saturating_sub(self.written) * RECORD;
        let rest = bytes.len() - on_disk * RECORD;
        bytes[on_disk * RECORD..].copy_from_slice(&self.buffer[from..from + rest]);
        bytes.chunks_exact(RECORD).map(decode).collect()
    }

    /// Writes the buffer out; on a failed write (a full disk), the file's records come back into memory and
    /// stay there with all that follows.
    fn write_out(&mut self) {
        let Some(file) = &mut self.file else { return };
        if file.write_all(&self.buffer).is_ok() {
            self.written += self.buffer.len() / RECORD;
            self.buffer.clear();
            return;
        }
        let mut all = Vec::with_capacity(self.written * RECORD + self.buffer.len());
        let want = (self.written * RECORD) as u64;
        let read =
            file.seek(SeekFrom::Start(0)).and_then(|_| Read::take(&mut *file, want).read_to_end(&mut all));
        match read {
            Ok(n) if n == self.written * RECORD => {
                all.extend_from_slice(&self.buffer);
                self.buffer = all;
                self.written = 0;
                self.file = None;
            }
            _ => panic!("the search's trace file can be neither written nor read back"),
        }
    }
}

/// A record's parent and step.
fn decode(record: &[u8]) -> (u32, u16) {
    let parent = u32::from_le_bytes([record[0], record[1], record[2], record[3]]);
    (parent, u16::from_le_bytes([record[4], record[5]]))
}

impl Default for Steps {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_record_comes_back_from_disk_and_memory() {
        let mut steps = Steps::new();
        assert!(steps.file.is_some(), "a file with no name can be made here");
        let n = 3 * BUFFER / RECORD + 5;
        for i in 0..n as u32 {
            steps.push(i.wrapping_mul(2_654_435_761), (i % 65_521) as u16);
        }
        assert_eq!(steps.len(), n);
        assert_eq!(steps.disk_bytes(), (3 * BUFFER) as u64, "all but the last records on disk");
        let record = |i: u32| (i.wrapping_mul(2_654_435_761), (i % 65_521) as u16);
        for i in [0, 1, 777, (BUFFER / RECORD) as u32, (3 * BUFFER / RECORD) as u32, n as u32 - 1] {
            assert_eq!(steps.get(i), record(i), "record {i}");
        }
        let edge = (3 * BUFFER / RECORD) as u32;
        for ids in [0..3, edge - 2..edge, edge - 2..edge + 3, edge..edge + 4, 5..n as u32, 7..7] {
            assert_eq!(steps.records(ids.clone()), ids.clone().map(record).collect::<Vec<_>>(), "{ids:?}");
        }
    }
}
