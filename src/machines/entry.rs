//! A repair entry (CKE's `RepairQueueEntry`, its repair.go) kept in two labels of its machine:
//!
//! - `autorepair.entry` = `<index>.<operation>.<machine type>`: what to run, fixed at creation;
//! - `autorepair.progress` = `<status>.<step>.<step status>.<last transition>.<drain back-off
//!   count>.<drain back-off expiry>[.deleted]`: where it stands, rewritten at each transition.
//!
//! Times are Unix seconds (0 = Go's zero time). A machine has at most one entry: CKE's
//! per-machine limiter refuses a new one while any is recorded, finished or not.

use super::labels::{self, ENTRY, PROGRESS};
use serde::Serialize;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Queued,
    Processing,
    Succeeded,
    Failed,
}

impl Status {
    pub const ALL: [Status; 4] = [
        Status::Queued,
        Status::Processing,
        Status::Succeeded,
        Status::Failed,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Queued => "queued",
            Status::Processing => "processing",
            Status::Succeeded => "succeeded",
            Status::Failed => "failed",
        }
    }
    pub fn finished(self) -> bool {
        matches!(self, Status::Succeeded | Status::Failed)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StepStatus {
    Waiting,
    Draining,
    Watching,
}

impl StepStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::Waiting => "waiting",
            StepStatus::Draining => "draining",
            StepStatus::Watching => "watching",
        }
    }
}

/// Where an entry stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Progress {
    pub status: Status,
    pub step: usize,
    pub step_status: StepStatus,
    pub last_transition: i64,
    pub drain_backoff_count: u32,
    pub drain_backoff_expire: i64,
    pub deleted: bool,
}

impl Progress {
    /// A new entry: queued, waiting, step 0.
    pub fn queued(now: i64) -> Progress {
        Progress {
            status: Status::Queued,
            step: 0,
            step_status: StepStatus::Waiting,
            last_transition: now,
            drain_backoff_count: 0,
            drain_backoff_expire: 0,
            deleted: false,
        }
    }

    /// The same entry in a new status, step and step status, as of `now`.
    pub fn to(self, status: Status, step: usize, step_status: StepStatus, now: i64) -> Progress {
        Progress {
            status,
            step,
            step_status,
            last_transition: now,
            ..self
        }
    }

    pub fn value(&self) -> String {
        let mut v = format!(
            "{}.{}.{}.{}.{}.{}",
            self.status,
            self.step,
            self.step_status.as_str(),
            self.last_transition.max(0),
            self.drain_backoff_count,
            self.drain_backoff_expire.max(0)
        );
        if self.deleted {
            v.push_str(".deleted");
        }
        v
    }

    pub fn parse(value: &str) -> Result<Progress, EntryError> {
        let f: Vec<&str> = value.split('.').collect();
        let bad = || EntryError::Progress(value.to_owned());
        if !(f.len() == 6 || (f.len() == 7 && f[6] == "deleted")) {
            return Err(bad());
        }
        let status = Status::ALL
            .into_iter()
            .find(|s| s.as_str() == f[0])
            .ok_or_else(bad)?;
        let step_status = [
            StepStatus::Waiting,
            StepStatus::Draining,
            StepStatus::Watching,
        ]
        .into_iter()
        .find(|s| s.as_str() == f[2])
        .ok_or_else(bad)?;
        Ok(Progress {
            status,
            step: f[1].parse().map_err(|_| bad())?,
            step_status,
            last_transition: f[3].parse().map_err(|_| bad())?,
            drain_backoff_count: f[4].parse().map_err(|_| bad())?,
            drain_backoff_expire: f[5].parse().map_err(|_| bad())?,
            deleted: f.len() == 7,
        })
    }
}

/// Why a machine's entry labels cannot be read, or an entry cannot be written in them.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    #[error(
        "{p}={0:?} is not <status>.<step>.<step status>.<epoch>.<count>.<epoch>[.deleted]",
        p = PROGRESS
    )]
    Progress(String),
    #[error("{p} without {e}: remove it (`autorepair repair delete ADDRESS`)", p = PROGRESS, e = ENTRY)]
    ProgressWithoutEntry,
    #[error("{e} without {p}", p = PROGRESS, e = ENTRY)]
    EntryWithoutProgress,
    #[error("{e}={0:?} is not <index>.<operation>.<machine type>", e = ENTRY)]
    Shape(String),
    #[error(
        "{e}={entry:?}: the index {index:?} is not a number from 0 to {max} (CKE's indexes are int64)",
        e = ENTRY,
        max = super::MAX_INDEX
    )]
    Index { entry: String, index: String },
    #[error(
        "operation {operation:?} and machine type {machine_type:?} do not fit sabakan label {e} (letters, digits, _ . -, no . in the operation, at most {max} characters in all)",
        e = ENTRY,
        max = labels::MAX_LEN
    )]
    DoesNotFit {
        operation: String,
        machine_type: String,
    },
}

/// What an entry repairs, fixed when it is created.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Entry {
    pub index: u64,
    pub operation: String,
    pub machine_type: String,
    pub progress: Progress,
}

impl Entry {
    pub fn value(index: u64, operation: &str, machine_type: &str) -> Result<String, EntryError> {
        let v = format!("{index}.{operation}.{machine_type}");
        let ok = !operation.is_empty()
            && !operation.contains('.')
            && labels::is_label_text(operation)
            && labels::is_label_text(machine_type)
            && labels::is_label_value(&v);
        if ok {
            Ok(v)
        } else {
            Err(EntryError::DoesNotFit {
                operation: operation.to_owned(),
                machine_type: machine_type.to_owned(),
            })
        }
    }

    /// Reads the entry from a machine's labels; `Ok(None)` when it has none.
    pub fn from_labels<'a>(
        labels: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Option<Entry>, EntryError> {
        let (mut entry, mut progress) = (None, None);
        for (name, value) in labels {
            if name == ENTRY {
                entry = Some(value);
            } else if name == PROGRESS {
                progress = Some(value);
            }
        }
        let Some(entry) = entry else {
            return match progress {
                Some(_) => Err(EntryError::ProgressWithoutEntry),
                None => Ok(None),
            };
        };
        let mut f = entry.splitn(3, '.');
        let (index, operation, machine_type) = match (f.next(), f.next(), f.next()) {
            (Some(i), Some(o), Some(t)) => (i, o, t),
            _ => {
                return Err(EntryError::Shape(entry.to_owned()));
            }
        };
        let index: u64 = match index.parse() {
            Ok(n) if n <= super::MAX_INDEX => n,
            _ => {
                return Err(EntryError::Index {
                    entry: entry.to_owned(),
                    index: index.to_owned(),
                });
            }
        };
        let progress = match progress {
            Some(p) => Progress::parse(p)?,
            None => return Err(EntryError::EntryWithoutProgress),
        };
        Ok(Some(Entry {
            index,
            operation: operation.to_owned(),
            machine_type: machine_type.to_owned(),
            progress,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_through_their_labels() {
        let mut p = Progress::queued(1_800_000_000).to(
            Status::Processing,
            2,
            StepStatus::Watching,
            1_800_000_100,
        );
        p.drain_backoff_count = 3;
        p.drain_backoff_expire = 1_800_000_900;
        for deleted in [false, true] {
            p.deleted = deleted;
            let value = p.value();
            assert!(labels::is_label_text(&value), "{value}");
            assert!(value.len() <= labels::MAX_LEN);
            let entry = Entry::value(12, "unreachable", "IPMI-2.0").unwrap();
            let e = Entry::from_labels([(ENTRY, entry.as_str()), (PROGRESS, value.as_str())])
                .unwrap()
                .unwrap();
            assert_eq!(e.progress, p);
            assert_eq!(
                (e.index, e.operation.as_str(), e.machine_type.as_str()),
                (12, "unreachable", "IPMI-2.0")
            );
        }
    }

    #[test]
    fn broken_records_say_what_is_wrong() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[(PROGRESS, "queued.0.waiting.1.0.0")], "without"),
            (&[(ENTRY, "1.unhealthy.qemu")], "without"),
            (
                &[
                    (ENTRY, "x.unhealthy.qemu"),
                    (PROGRESS, "queued.0.waiting.1.0.0"),
                ],
                "index",
            ),
            (
                &[
                    (ENTRY, "1.unhealthy.qemu"),
                    (PROGRESS, "queued.0.sleeping.1.0.0"),
                ],
                "step status",
            ),
        ];
        for (labels, want) in cases {
            let e = Entry::from_labels(labels.iter().copied())
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{e}");
        }
        assert_eq!(Entry::from_labels([("other", "x")]).unwrap(), None);
        assert!(Entry::value(1, "un.healthy", "qemu").is_err());
        assert!(Entry::value(1, "unhealthy", &"x".repeat(60)).is_err());
    }
}
