//! The live backend's link to sabakan (`--sabakan URL`): each pass reads every machine with
//! one `searchMachines` query, and each label write is one REST call (`PUT|DELETE
//! /api/v1/labels/<serial>/<name>`), made by the call that asks for it. The machines document
//! and everything the family does with it are the file backend's ([`super::file`]): only where
//! the document comes from and where writes go differ.
//!
//! Why every machine, not only those the trigger query selects: a machine whose repair is
//! under way may be healthy in sabakan again and still have its entry to finish, sabakan
//! cannot search by a label's name, and the racks' and the cluster's labels live on boot
//! servers, which the trigger query leaves out. The trigger query is applied to the answer
//! with sabakan's own matching rules ([`super::matches`]), as for a file. A pass costs one
//! request plus one per label write, and one more look before its new repair entries (at most
//! once a second: `super::brake`).

use crate::engine::BackendError;
use crate::sabakan::client::{ClientError, Endpoint, MachineParams, Sabakan, Variables};
use serde_json::Value;

/// A sabakan server, as the machines backend reads and writes it.
#[derive(Debug)]
pub struct Live {
    client: Sabakan,
    url: String,
}

/// The variables that select every machine: both sent as `null`, so the query's defaults
/// (no boot, no RETIRED machine) do not apply (CKE's sabakan/query.go).
fn everything() -> Variables {
    Variables {
        having: None::<MachineParams>,
        not_having: None,
    }
}

impl Live {
    pub fn connect(endpoint: &Endpoint) -> Result<Live, BackendError> {
        let client = Sabakan::new(endpoint).map_err(|e| BackendError::Api(e.to_string()))?;
        let url = client.shown_url();
        Ok(Live { client, url })
    }

    /// Where this backend keeps the deadline of the write it makes, for its requests.
    pub fn lead(&self) -> &crate::fence::Lead {
        self.client.lead()
    }

    /// sabakan's URL, for messages.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Every machine, as sabakan's GraphQL answer.
    pub fn read(&self) -> Result<Value, BackendError> {
        self.client
            .search_answer(Some(&everything()))
            .map_err(|e| self.error(e, None))
    }

    /// Sets one label; logged once sabakan has taken it.
    pub fn put(&self, serial: &str, name: &str, value: &str) -> Result<(), BackendError> {
        self.client
            .put_label(serial, name, value)
            .map_err(|e| self.error(e, Some((serial, name, "PUT"))))?;
        tracing::info!(machine = serial, label = name, value, sabakan = %self.url, "label set");
        Ok(())
    }

    /// Removes one label (absent already is as good); logged once sabakan has done it.
    pub fn delete(&self, serial: &str, name: &str) -> Result<(), BackendError> {
        let was = self
            .client
            .delete_label(serial, name)
            .map_err(|e| self.error(e, Some((serial, name, "DELETE"))))?;
        if was {
            tracing::info!(machine = serial, label = name, sabakan = %self.url, "label removed");
        }
        Ok(())
    }

    /// The client's error as the engine's, naming the machine and the label it was about.
    fn error(&self, e: ClientError, label: Option<(&str, &str, &str)>) -> BackendError {
        let about = label.map_or_else(String::new, |(serial, name, _)| {
            format!("machine {serial}, label {name}: ")
        });
        match (e, label) {
            (
                ClientError::Status {
                    url, status, body, ..
                },
                Some((_, _, method)),
            ) => BackendError::Http {
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
            },
            (e @ ClientError::Fenced { .. }, _) => BackendError::Halted(format!("{about}{e}")),
            (ClientError::Unreachable { url, problem }, _) => BackendError::Connect {
                service: "sabakan",
                url,
                cause: format!("{about}{problem}"),
                hint: "check that sabakan runs there and that the URL is right",
            },
            (other, _) => BackendError::Api(format!("{about}{other}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_machine_and_the_label() {
        let live = Live::connect(&Endpoint::new("http://sabakan.invalid:10080")).unwrap();
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
            let got = live.error(e, Some(("s1", "autorepair.progress", "PUT")));
            assert!(got.to_string().contains(want), "{got}");
            assert_eq!(got.is_transient(), transient, "{got}");
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
