//! The live backend (`--sabakan URL`): sabakan itself. Each pass reads every machine with one
//! `searchMachines` query, and each label write is one REST call (`PUT|DELETE
//! /api/v1/labels/<serial>/<name>`), made by the call that asks for it and before the document
//! changes. The machines document and everything the family does with it are shared with the
//! file backend ([`super::document`]): only where the document comes from and where writes go
//! differ. Before each new repair entry sabakan is read again for a suspend given meanwhile
//! (`super::brake`).
//!
//! Why every machine, not only those the trigger query selects: a machine whose repair is
//! under way may be healthy in sabakan again and still have its entry to finish, sabakan
//! cannot search by a label's name, and the racks' and the cluster's labels live on boot
//! servers, which the trigger query leaves out. The trigger query is applied to the answer
//! with sabakan's own matching rules ([`super::matches`]), as for a file. A pass costs one
//! request plus one per label write, and one more look before its new repair entries (at most
//! once a second: `super::brake`).

use super::config::Repair;
use super::document::{Document, Store};
use super::drain::NodesFile;
use crate::engine::{BackendError, WriteGuard};
use crate::sabakan::client::{ClientError, Endpoint, MachineParams, Sabakan, Variables};
use crate::transport::TransportError;
use serde_json::Value;

/// A sabakan server, as the machines backend reads and writes it.
pub struct SabakanLive {
    client: Sabakan,
    url: String,
    /// The document was read by [`SabakanLive::open`] and not yet handed to a snapshot.
    fresh: bool,
    /// Suspends given elsewhere while a pass acts.
    brake: super::brake::Watch,
}

/// The variables that select every machine: both sent as `null`, so the query's defaults
/// (no boot, no RETIRED machine) do not apply (CKE's sabakan/query.go).
fn everything() -> Variables {
    Variables {
        having: None::<MachineParams>,
        not_having: None,
    }
}

impl SabakanLive {
    /// A client of sabakan at `endpoint`; nothing is read yet.
    pub fn connect(endpoint: &Endpoint) -> Result<SabakanLive, BackendError> {
        let client = Sabakan::new(endpoint).map_err(BackendError::service)?;
        let url = client.shown_url();
        Ok(SabakanLive {
            client,
            url,
            fresh: false,
            brake: Default::default(),
        })
    }

    /// Its machines, read once now: the first snapshot takes this read, each later one reads
    /// sabakan again.
    pub fn open(
        mut self,
        repair: Repair,
        nodes: Option<NodesFile>,
    ) -> Result<Document, BackendError> {
        let doc = self.read()?;
        self.fresh = true;
        Document::new(Box::new(self), doc, repair, nodes)
    }

    /// Where this backend keeps the deadline of the write it makes, for its requests.
    pub fn lead(&self) -> &crate::fence::Lead {
        self.client.lead()
    }

    /// Every machine, as sabakan's GraphQL answer.
    pub fn read(&self) -> Result<Value, BackendError> {
        self.client
            .search_answer(Some(&everything()))
            .map_err(|e| self.failed(e, None))
    }

    /// Sets one label; logged once sabakan has taken it.
    pub fn put(&self, serial: &str, name: &str, value: &str) -> Result<(), BackendError> {
        self.client
            .put_label(serial, name, value)
            .map_err(|e| self.failed(e, Some((serial, name, "PUT"))))?;
        tracing::info!(machine = serial, label = name, value, sabakan = %self.url, "label set");
        Ok(())
    }

    /// Removes one label (absent already is as good); logged once sabakan has done it.
    pub fn delete(&self, serial: &str, name: &str) -> Result<(), BackendError> {
        let was = self
            .client
            .delete_label(serial, name)
            .map_err(|e| self.failed(e, Some((serial, name, "DELETE"))))?;
        if was {
            tracing::info!(machine = serial, label = name, sabakan = %self.url, "label removed");
        }
        Ok(())
    }

    /// The client's error as the engine's, naming the machine and the label it was about.
    fn failed(&self, e: ClientError, label: Option<(&str, &str, &str)>) -> BackendError {
        let about = label.map_or_else(String::new, |(serial, name, _)| {
            format!("machine {serial}, label {name}: ")
        });
        match (e, label) {
            (
                ClientError::Status {
                    url, status, body, ..
                },
                Some((_, _, method)),
            ) => TransportError::Http {
                service: "sabakan",
                method: method.to_owned(),
                url,
                status,
                message: format!("{about}{body}"),
                hint: match status {
                    409 => "; changed by someone else meanwhile: not retried, the next pass re-reads the machine".into(),
                    500.. => "; the label was not written: the next pass re-reads the machine and tries again".into(),
                    _ => String::new(),
                },
            }
            .into(),
            (e @ ClientError::Fenced { .. }, _) => BackendError::Halted(format!("{about}{e}")),
            (ClientError::Unreachable { url, problem }, _) => TransportError::Connect {
                service: "sabakan",
                url,
                cause: format!("{about}{problem}"),
                hint: "check that sabakan runs there and that the URL is right",
            }
            .into(),
            (other, _) => BackendError::Api(format!("{about}{other}")),
        }
    }
}

impl Store for SabakanLive {
    fn error(&self, message: String) -> BackendError {
        BackendError::Api(format!("sabakan at {}: {message}", self.url))
    }

    fn reread(&mut self) -> Result<Option<Value>, BackendError> {
        if std::mem::take(&mut self.fresh) {
            return Ok(None);
        }
        self.read().map(Some)
    }

    fn on_snapshot(&mut self, machines: &[crate::sabakan::Machine]) {
        self.brake.reset(machines);
    }

    fn write(&mut self, serial: &str, name: &str, value: Option<&str>) -> Result<(), BackendError> {
        match value {
            Some(v) => self.put(serial, name, v),
            None => self.delete(serial, name),
        }
    }

    /// Rule 8 from any host: before a new entry on `serial`, sabakan as it is now (at most
    /// once a second); a suspend that appeared since the pass read halts the pass.
    fn before_entry(&mut self, serial: &str, now: jiff::Timestamp) -> Result<(), BackendError> {
        if self.brake.suspended.is_some() {
            return self.brake.check(serial, &[]);
        }
        if !self.brake.due() {
            return Ok(());
        }
        let machines = self.read().and_then(|doc| {
            crate::sabakan::model::machines_from_value(doc, now).map_err(BackendError::service)
        });
        match machines {
            Ok(machines) => self.brake.check(serial, &machines),
            Err(e) => {
                let said = format!("cannot read sabakan again before a new entry: {e}");
                if crate::plug::first_time(&said) {
                    tracing::warn!("{said}; a suspend given elsewhere holds from the next pass");
                }
                Ok(())
            }
        }
    }

    fn suspended_meanwhile(&self) -> Option<String> {
        self.brake.suspended.as_ref().map(ToString::to_string)
    }

    fn guard(&self, guard: WriteGuard) -> WriteGuard {
        crate::fence::leading(guard, self.lead())
    }

    // Every write was made in sabakan by the call that asked for it: nothing is left to save.
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_machine_and_the_label() {
        let live = SabakanLive::connect(&Endpoint::new("http://sabakan.invalid:10080")).unwrap();
        let cases = [
            (
                ClientError::Status {
                    url: "u".into(),
                    status: 500,
                    body: "boom".into(),
                },
                "machine s1, label autorepair.progress: boom; the label was not written",
                true,
            ),
            (
                ClientError::Status {
                    url: "u".into(),
                    status: 409,
                    body: "conflict".into(),
                },
                "machine s1, label autorepair.progress: conflict; changed by someone else",
                false,
            ),
            (
                ClientError::NoMachine {
                    url: "u".into(),
                    serial: "s1".into(),
                },
                "machine s1, label autorepair.progress: sabakan at u has no machine with serial \"s1\" (HTTP 404)",
                false,
            ),
        ];
        for (e, want, transient) in cases {
            let got = live.failed(e, Some(("s1", "autorepair.progress", "PUT")));
            assert!(got.to_string().contains(want), "{got}");
            assert_eq!(crate::transport::is_transient(&got), transient, "{got}");
        }
    }

    #[test]
    fn every_machine_is_asked_for_with_explicit_nulls() {
        let body = crate::sabakan::client::request_body(Some(&everything()));
        assert_eq!(
            body["variables"],
            serde_json::json!({"having": null, "notHaving": null})
        );
    }
}
