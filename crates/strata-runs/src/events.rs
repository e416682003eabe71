//! A run's event log, `events.jsonl` in its directory: one JSON object per line, each the
//! event a run's `--json` stream shows, with `ts` (Unix milliseconds) first. Lines are
//! appended as events happen (one `write` each, so a reader tailing the file sees whole
//! lines as soon as they are written), and the file is synced before each checkpoint is
//! replaced ([`RunDir::write_checkpoint`]): what a checkpoint records, the log holds on disk.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use serde_json::Value;
use strata_core::Error;

use crate::RunDir;

/// The event log's name inside a run directory.
pub const EVENTS_FILE: &str = "events.jsonl";

/// Unix milliseconds now.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The event log of a run, open for appending.
#[derive(Debug)]
pub struct EventLog {
    file: File,
    line: Vec<u8>,
}

impl EventLog {
    /// Opens (creating it) the event log of `dir` for appending; a link at its name is
    /// refused, never written through.
    pub fn open(dir: &RunDir) -> Result<EventLog, Error> {
        let path = dir.events_file();
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
            .open(&path)
            .map_err(|e| Error::io("open", &path, e))?;
        Ok(EventLog {
            file,
            line: Vec::with_capacity(256),
        })
    }

    /// Appends `event` (a JSON object) as one line, `ts` (Unix milliseconds) first; any
    /// other value is written as `{"ts": …, "value": …}`.
    pub fn append(&mut self, ts: u64, event: &Value) -> std::io::Result<()> {
        self.line.clear();
        write!(self.line, "{{\"ts\":{ts}")?;
        match event {
            Value::Object(fields) => {
                for (key, value) in fields {
                    self.line.push(b',');
                    serde_json::to_writer(&mut self.line, key)?;
                    self.line.push(b':');
                    serde_json::to_writer(&mut self.line, value)?;
                }
            }
            other => {
                self.line.extend_from_slice(b",\"value\":");
                serde_json::to_writer(&mut self.line, other)?;
            }
        }
        self.line.extend_from_slice(b"}\n");
        self.file.write_all(&self.line)
    }

    /// [`EventLog::append`] of a value that serializes as a JSON object, written straight
    /// from its serialization (no [`Value`] is built): `ts` first, then its fields.
    pub fn append_object<T: serde::Serialize + ?Sized>(
        &mut self,
        ts: u64,
        event: &T,
    ) -> std::io::Result<()> {
        self.line.clear();
        write!(self.line, "{{\"ts\":{ts}")?;
        let mark = self.line.len();
        serde_json::to_writer(&mut self.line, event)?;
        match self.line.get(mark..) {
            Some(b"{}") => self.line.truncate(mark),
            Some([b'{', ..]) => {
                self.line[mark] = b',';
                self.line.truncate(self.line.len() - 1);
            }
            _ => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "an event is a JSON object",
                ))
            }
        }
        self.line.extend_from_slice(b"}\n");
        self.file.write_all(&self.line)
    }
}

/// Whole lines of an event log read from a byte offset on: each line's events and the
/// offset just past it (what a reader resumes from). A last line without its newline is
/// being written: it is left for the next read. A line that is not a JSON object is
/// skipped.
#[derive(Debug, Default)]
pub struct EventLines {
    /// The events, each with the offset just past its line.
    pub events: Vec<(u64, Value)>,
    /// The offset just past the last whole line read (where the next read starts).
    pub end: u64,
}

impl RunDir {
    /// The event log's path.
    pub fn events_file(&self) -> PathBuf {
        self.path.join(EVENTS_FILE)
    }

    /// The events logged from byte `offset` on (see [`EventLines`]); none when the run
    /// has no event log.
    pub fn read_events(&self, offset: u64) -> Result<EventLines, Error> {
        let path = self.events_file();
        let mut file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(EventLines {
                    events: Vec::new(),
                    end: offset,
                })
            }
            Err(e) => return Err(Error::io("open", &path, e)),
        };
        file.seek(SeekFrom::Start(offset))
            .map_err(|e| Error::io("read", &path, e))?;
        let mut reader = BufReader::new(file);
        let mut out = EventLines {
            events: Vec::new(),
            end: offset,
        };
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = reader
                .read_until(b'\n', &mut line)
                .map_err(|e| Error::io("read", &path, e))?;
            if n == 0 || line.last() != Some(&b'\n') {
                return Ok(out);
            }
            out.end += n as u64;
            if let Ok(value @ Value::Object(_)) = serde_json::from_slice::<Value>(&line) {
                out.events.push((out.end, value));
            }
        }
    }

    /// The one event whose line starts at byte `offset` of the log; `None` when no whole
    /// line starting there holds a JSON object.
    pub fn read_event_at(&self, offset: u64) -> Result<Option<Value>, Error> {
        let path = self.events_file();
        let mut file = File::open(&path).map_err(|e| Error::io("open", &path, e))?;
        file.seek(SeekFrom::Start(offset))
            .map_err(|e| Error::io("read", &path, e))?;
        let mut line = Vec::new();
        BufReader::new(file)
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::io("read", &path, e))?;
        if line.last() != Some(&b'\n') {
            return Ok(None);
        }
        Ok(serde_json::from_slice::<Value>(&line)
            .ok()
            .filter(Value::is_object))
    }

    /// The times (`ts`) of the first and the last event of the log, read from its first
    /// line and its last whole line; `None` without a log or an event.
    pub fn event_span(&self) -> Option<(u64, u64)> {
        const TAIL: u64 = 64 * 1024;
        let mut file = File::open(self.events_file()).ok()?;
        let ts = |line: &[u8]| -> Option<u64> {
            serde_json::from_slice::<Value>(line).ok()?["ts"].as_u64()
        };
        let mut first = Vec::new();
        BufReader::new(&mut file)
            .read_until(b'\n', &mut first)
            .ok()?;
        let first = ts(&first)?;
        let len = file.metadata().ok()?.len();
        file.seek(SeekFrom::Start(len.saturating_sub(TAIL))).ok()?;
        let mut tail = Vec::new();
        std::io::Read::read_to_end(&mut file, &mut tail).ok()?;
        let whole = &tail[..tail.iter().rposition(|&b| b == b'\n')?];
        let last = whole
            .rsplit(|&b| b == b'\n')
            .next()
            .and_then(ts)
            .unwrap_or(first);
        Some((first, last))
    }

    /// Syncs the event log to disk when the run has one (before a checkpoint is replaced).
    pub(crate) fn sync_events(&self) -> Result<(), Error> {
        let path = self.events_file();
        match OpenOptions::new()
            .read(true)
            .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
            .open(&path)
        {
            Ok(file) => file.sync_data().map_err(|e| Error::io("sync", &path, e)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io("open", &path, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RunStore;
    use serde_json::json;

    #[test]
    fn events_are_lines_with_their_time_first_and_read_back_from_an_offset() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = RunStore::new(tmp.path()).create("r1").unwrap();
        assert_eq!(dir.read_events(0).unwrap().events, Vec::new());
        assert_eq!(dir.event_span(), None);
        let mut log = EventLog::open(&dir).unwrap();
        log.append(1_000, &json!({"event": "started", "node": "a"}))
            .unwrap();
        log.append(1_005, &json!([1])).unwrap();
        let text = std::fs::read_to_string(dir.events_file()).unwrap();
        assert_eq!(
            text,
            "{\"ts\":1000,\"event\":\"started\",\"node\":\"a\"}\n{\"ts\":1005,\"value\":[1]}\n"
        );
        let all = dir.read_events(0).unwrap();
        assert_eq!(all.end, text.len() as u64);
        assert_eq!(all.events.len(), 2);
        assert_eq!(all.events[0].0, 41);
        assert_eq!(all.events[1].1, json!({"ts": 1005, "value": [1]}));
        assert_eq!(
            dir.read_event_at(41).unwrap(),
            Some(all.events[1].1.clone())
        );
        assert_eq!(dir.read_event_at(40).unwrap(), None);
        assert_eq!(dir.event_span(), Some((1_000, 1_005)));
        let rest = dir.read_events(41).unwrap();
        assert_eq!(
            rest.events,
            vec![(all.end, json!({"ts": 1005, "value": [1]}))]
        );
    }

    #[test]
    fn an_object_is_written_straight_from_its_serialization() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = RunStore::new(tmp.path()).create("r1").unwrap();
        let mut log = EventLog::open(&dir).unwrap();
        log.append_object(7, &json!({"event": "step", "n": [1]}))
            .unwrap();
        log.append_object(8, &json!({})).unwrap();
        let e = log.append_object(9, &json!([1])).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
        assert_eq!(
            std::fs::read_to_string(dir.events_file()).unwrap(),
            "{\"ts\":7,\"event\":\"step\",\"n\":[1]}\n{\"ts\":8}\n"
        );
    }

    #[test]
    fn a_line_being_written_is_left_for_the_next_read() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = RunStore::new(tmp.path()).create("r1").unwrap();
        std::fs::write(dir.events_file(), "{\"ts\":1}\nnot json\n{\"ts\":").unwrap();
        let read = dir.read_events(0).unwrap();
        assert_eq!(read.events, vec![(9, json!({"ts": 1}))]);
        assert_eq!(read.end, 18);
    }

    #[test]
    fn a_link_at_the_log_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = RunStore::new(tmp.path()).create("r1").unwrap();
        let outside = tmp.path().join("outside");
        std::fs::write(&outside, "kept").unwrap();
        std::os::unix::fs::symlink(&outside, dir.events_file()).unwrap();
        let e = EventLog::open(&dir).unwrap_err();
        assert_eq!(e.kind(), strata_core::ErrorKind::Io);
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "kept");
        assert!(dir.write_checkpoint(b"{}").is_err());
    }
}
