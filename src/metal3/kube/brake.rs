//! The operator's brake from any host (rule 8): a suspend written while a pass acts, from
//! another host (`autorepair suspend` on a laptop, `kubectl annotate`), stops that pass before
//! its next repair starts. Before a repair's first operation the pass reads the suspend marks
//! of the target and of its scopes (owner, MachineDeployment, Cluster) as the server has them
//! now, each at most once a second; a suspend that was not there when the pass read the fleet
//! halts the pass, as the brake file on this host does. A read that fails stops nothing: the
//! write after it fails too, or the next look finds the suspend.

use super::{Inner, text};
use crate::engine::{BackendError, ObjectRef};
use crate::k8s::errors::{from_kube, nonsense};
use crate::metal3::marks::{SUSPEND_ALL_KEY, SUSPEND_KEY};
use crate::metal3::objects::{Snapshot, kind};
use ::kube::Resource;
use ::kube::api::{DynamicObject, GetParams};
use ::kube::core::Request;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

/// How often one object's marks are read again.
const EVERY: Duration = Duration::from_secs(1);

/// The marks that suspend.
const KEYS: [&str; 2] = [SUSPEND_KEY, SUSPEND_ALL_KEY];

#[derive(Default)]
pub(super) struct Watch {
    /// Each object's suspend marks as the pass read them.
    read: HashMap<ObjectRef, BTreeMap<String, String>>,
    /// Each Machine's objects to look at, by its key: itself, then its scopes.
    chains: HashMap<String, Vec<ObjectRef>>,
    looked: HashMap<ObjectRef, Instant>,
    /// The object whose suspend appeared: every later look says so at once.
    pub suspended: Option<ObjectRef>,
}

impl Watch {
    /// What a snapshot read: every object's suspend marks, and each Machine's chain.
    pub(super) fn reset(&mut self, snap: &Snapshot, read: &HashMap<ObjectRef, super::Live>) {
        self.read = read
            .iter()
            .map(|(object, live)| {
                let marks = KEYS
                    .iter()
                    .filter_map(|k| Some(((*k).to_owned(), live.annotations.get(*k)?.clone())))
                    .collect();
                (object.clone(), marks)
            })
            .collect();
        let scopes: HashMap<&str, &crate::metal3::objects::Scope> =
            snap.scopes.iter().map(|s| (s.key.as_str(), s)).collect();
        self.chains = snap
            .machines
            .iter()
            .map(|m| {
                let mut chain = vec![ObjectRef::new(kind::MACHINE, m.key.clone())];
                chain.extend(
                    crate::metal3::scope_chain(m, |k| scopes.get(k).copied())
                        .into_iter()
                        .map(|s| s.object.clone()),
                );
                (m.key.clone(), chain)
            })
            .collect();
        self.looked.clear();
        self.suspended = None;
    }
}

impl Inner {
    /// Halts the pass if a suspend appeared on the Machine `target` or one of its scopes since
    /// the pass read the fleet.
    pub(super) async fn watch_suspends(&mut self, target: &str) -> Result<(), BackendError> {
        if let Some(object) = &self.brake.suspended {
            return Err(halted(object));
        }
        let chain = self.brake.chains.get(target).cloned().unwrap_or_default();
        for object in chain {
            if self
                .brake
                .looked
                .get(&object)
                .is_some_and(|t| t.elapsed() < EVERY)
            {
                continue;
            }
            self.brake.looked.insert(object.clone(), Instant::now());
            let now = match self.annotations_now(&object).await {
                Ok(now) => now,
                Err(e) => {
                    // A brake that cannot look is worth saying: a Role without `get` on the
                    // kind, say, leaves a suspend given elsewhere to the next pass.
                    let said = format!("cannot read {object}'s suspend marks: {e}");
                    if crate::plug::first_time(&said) {
                        tracing::warn!(
                            "{said}; a suspend given elsewhere holds from the next pass"
                        );
                    }
                    continue;
                }
            };
            let before = self.brake.read.get(&object);
            let appeared = KEYS.iter().any(|k| {
                now.get(*k)
                    .is_some_and(|v| before.and_then(|b| b.get(*k)) != Some(v))
            });
            if appeared {
                self.brake.suspended = Some(object.clone());
                return Err(halted(&object));
            }
        }
        Ok(())
    }

    /// The object's annotations as the server has them now.
    async fn annotations_now(
        &self,
        object: &ObjectRef,
    ) -> Result<BTreeMap<String, String>, BackendError> {
        let live = self.live(object)?;
        let ep = self
            .endpoint(&live.home)
            .ok_or_else(|| BackendError::NoSuchObject {
                object: object.clone(),
            })?;
        let req = Request::new(DynamicObject::url_path(
            &live.api,
            live.namespace.as_deref(),
        ))
        .get(&live.name, &GetParams::default())
        .map_err(|e| BackendError::Api(format!("{object}: cannot build the read: {e}")))?;
        let path = req.uri().to_string();
        let call = crate::k8s::errors::Call {
            object: Some(object),
            ..self.call("GET", &ep.server, &path, "suspend marks")
        };
        let body = ep
            .client
            .request_text(req)
            .await
            .map_err(|e| from_kube(e, &call))?;
        let now: Value =
            serde_json::from_str(&body).map_err(|e| nonsense(&call, &format!("not JSON: {e}")))?;
        if text(&now, "/metadata/uid") != Some(live.uid.as_str()) {
            return Err(BackendError::NoSuchObject {
                object: object.clone(),
            });
        }
        Ok(now
            .pointer("/metadata/annotations")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                    .collect()
            })
            .unwrap_or_default())
    }
}

fn halted(object: &ObjectRef) -> BackendError {
    BackendError::Halted(format!(
        "{object} was suspended in the fleet while this pass ran (its suspend mark appeared): no repair starts under it"
    ))
}
