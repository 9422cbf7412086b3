//! Writing: every write conditioned on what the pass read (a JSON merge patch carrying the
//! resourceVersion, a DELETE with uid and resourceVersion preconditions, an eviction), and the
//! operations ([`Op`]) made of them, the drain among them.

use super::*;

impl Inner {
    pub(super) fn live(&self, object: &ObjectRef) -> Result<&Live, BackendError> {
        self.live
            .get(object)
            .ok_or_else(|| BackendError::NoSuchObject {
                object: object.clone(),
            })
    }

    /// Whether the guard (if any) lets the next write be made.
    pub(super) fn may_write(&self) -> Result<(), BackendError> {
        self.guard.as_ref().map_or(Ok(()), |g| g().map(drop))
    }

    /// A JSON merge patch conditioned on the resourceVersion the pass holds for the object;
    /// the answer's resourceVersion becomes the one it holds.
    pub(super) async fn patch(
        &mut self,
        object: &ObjectRef,
        body: Value,
    ) -> Result<(), BackendError> {
        self.patch_at(object, None, body).await
    }

    /// [`Inner::patch`] on the object or one of its subresources (`status`).
    pub(super) async fn patch_at(
        &mut self,
        object: &ObjectRef,
        subresource: Option<&str>,
        mut body: Value,
    ) -> Result<(), BackendError> {
        self.may_write()?;
        let live = self.live(object)?.clone();
        let ep = self
            .endpoint(&live.home)
            .ok_or_else(|| BackendError::NoSuchObject {
                object: object.clone(),
            })?;
        body["metadata"]["resourceVersion"] = json!(live.resource_version);
        let params = PatchParams {
            field_manager: Some("autorepair".into()),
            ..PatchParams::default()
        };
        let request = Request::new(DynamicObject::url_path(
            &live.api,
            live.namespace.as_deref(),
        ));
        let patch = Patch::Merge(&body);
        let mut req = match subresource {
            None => request.patch(&live.name, &params, &patch),
            Some(sub) => request.patch_subresource(sub, &live.name, &params, &patch),
        }
        .map_err(|e| BackendError::Api(format!("{object}: cannot build the patch: {e}")))?;
        if let Some(Ok(uri)) = crate::k8s::tidy_query(&req.uri().to_string()).map(|u| u.parse()) {
            *req.uri_mut() = uri;
        }
        let path = req.uri().to_string();
        let what = resource_name(&live.api);
        let call = Call {
            object: Some(object),
            version: Some(&live.resource_version),
            ..self.call("PATCH", &ep.server, &path, &what)
        };
        tracing::debug!(object = %object, path = %path, resource_version = %live.resource_version, "patch");
        let answer = ep
            .client
            .request_text(req)
            .await
            .map_err(|e| from_kube(e, &call))?;
        let new: Value = serde_json::from_str(&answer)
            .map_err(|e| nonsense(&call, &format!("not JSON: {e}")))?;
        if text(&new, "/metadata/resourceVersion").is_none() {
            return Err(nonsense(&call, "the patched object has no resourceVersion"));
        }
        let api = live.api.clone();
        self.remember(object.clone(), &api, live.home, &new);
        Ok(())
    }

    /// Writes a report in a remediation object's `status` (its status subresource), conditioned
    /// on the resourceVersion read like every write.
    pub(super) async fn report(
        &mut self,
        remediation: &str,
        report: &objects::Report,
    ) -> Result<(), BackendError> {
        let object = ObjectRef::new(kind::REMEDIATION, remediation);
        let now = crate::engine::rfc3339(jiff::Timestamp::now().as_second());
        self.patch_at(
            &object,
            Some("status"),
            json!({"status": report.to_status(&now)}),
        )
        .await
    }

    /// Sets (`Some`) or removes (`None`) annotations.
    pub(super) async fn annotate(
        &mut self,
        object: &ObjectRef,
        changes: Map<String, Value>,
    ) -> Result<(), BackendError> {
        if changes.is_empty() {
            return Ok(());
        }
        self.patch(object, json!({"metadata": {"annotations": changes}}))
            .await
    }

    /// A DELETE conditioned on the object's uid (and resourceVersion).
    pub(super) async fn delete(
        &mut self,
        object: &ObjectRef,
        with_version: bool,
    ) -> Result<(), BackendError> {
        self.may_write()?;
        let live = self.live(object)?.clone();
        let ep = self
            .endpoint(&live.home)
            .ok_or_else(|| BackendError::NoSuchObject {
                object: object.clone(),
            })?;
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: Some(live.uid.clone()),
                resource_version: with_version.then(|| live.resource_version.clone()),
            }),
            ..DeleteParams::default()
        };
        let mut req = Request::new(DynamicObject::url_path(
            &live.api,
            live.namespace.as_deref(),
        ))
        .delete(&live.name, &params)
        .map_err(|e| BackendError::Api(format!("{object}: cannot build the delete: {e}")))?;
        if let Some(Ok(uri)) = crate::k8s::tidy_query(&req.uri().to_string()).map(|u| u.parse()) {
            *req.uri_mut() = uri;
        }
        let path = req.uri().to_string();
        let what = resource_name(&live.api);
        let call = Call {
            object: Some(object),
            version: with_version.then_some(live.resource_version.as_str()),
            ..self.call("DELETE", &ep.server, &path, &what)
        };
        tracing::debug!(object = %object, path = %path, uid = %live.uid, "delete");
        let answer = ep
            .client
            .request_text(req)
            .await
            .map_err(|e| from_kube(e, &call))?;
        let after: Value = serde_json::from_str(&answer).unwrap_or(Value::Null);
        // Finalizers keep it, being deleted, with a new resourceVersion; else it is gone.
        if after.pointer("/metadata/deletionTimestamp").is_some()
            && text(&after, "/metadata/resourceVersion").is_some()
        {
            let api = live.api.clone();
            self.remember(object.clone(), &api, live.home, &after);
        } else {
            self.live.remove(object);
        }
        Ok(())
    }

    pub(super) async fn apply(&mut self, op: &Op) -> Result<(), BackendError> {
        let machine = |key: &str| ObjectRef::new(kind::MACHINE, key);
        let host = |key: &str| ObjectRef::new(kind::HOST, key);
        let node = |name: &str| ObjectRef::new(kind::NODE, name);
        match op {
            Op::Drain { node: name } => self.drain(&node(name)).await,
            Op::PowerOff {
                machine: m,
                host: h,
                mode,
            } => {
                let m = machine(m);
                let annotations = &self.live(&m)?.annotations;
                if !REQUEST_KEYS.iter().any(|k| annotations.contains_key(*k)) {
                    self.annotate(&m, one(REQUEST_KEY, json!(""))).await?;
                }
                let h = host(h);
                if self
                    .live(&h)?
                    .annotations
                    .get(REBOOT_KEY)
                    .map(String::as_str)
                    != Some(mode.annotation())
                {
                    self.annotate(&h, one(REBOOT_KEY, json!(mode.annotation())))
                        .await?;
                }
                Ok(())
            }
            Op::DeleteMachine { machine: m } => self.delete(&machine(m), true).await,
            Op::DeleteNode {
                machine: m,
                node: n,
            } => {
                let (m, n) = (machine(m), node(n));
                let live = self.live(&n)?;
                let backup =
                    json!({"labels": live.labels, "annotations": live.annotations}).to_string();
                if self.live(&m)?.annotations.get(marks::NODE_BACKUP_KEY) != Some(&backup) {
                    self.annotate(&m, one(marks::NODE_BACKUP_KEY, json!(backup)))
                        .await?;
                }
                // The Node's resourceVersion moves with every status update; its uid is what
                // must not have changed (a Node registered again is not the one read).
                self.delete(&n, false).await
            }
            Op::ClearRequest { machine: m } => {
                let m = machine(m);
                let annotations = &self.live(&m)?.annotations;
                let gone: Map<String, Value> = REQUEST_KEYS
                    .iter()
                    .filter(|k| annotations.contains_key(**k))
                    .map(|k| ((*k).to_owned(), Value::Null))
                    .collect();
                if !gone.is_empty() {
                    self.annotate(&m, gone).await?;
                }
                Ok(())
            }
            Op::PowerOn { host: h } => {
                let h = host(h);
                if self.live(&h)?.annotations.contains_key(REBOOT_KEY) {
                    self.annotate(&h, one(REBOOT_KEY, Value::Null)).await?;
                }
                Ok(())
            }
            Op::RestoreNode {
                machine: m,
                node: n,
            } => {
                let (m, n) = (machine(m), node(n));
                let saved = self
                    .live(&m)?
                    .annotations
                    .get(marks::NODE_BACKUP_KEY)
                    .cloned()
                    .unwrap_or_else(|| "{}".into());
                let backup: Value = serde_json::from_str(&saved).map_err(|e| {
                    BackendError::Api(format!(
                        "{m}: {} is not JSON ({e}): fix or remove it",
                        marks::NODE_BACKUP_KEY
                    ))
                })?;
                let live = self.live(&n)?;
                let mut patch = json!({"metadata": {}});
                for (field, own) in [("labels", &live.labels), ("annotations", &live.annotations)] {
                    // The re-registered Node's own values win.
                    let missing: Map<String, Value> = backup
                        .get(field)
                        .and_then(Value::as_object)
                        .into_iter()
                        .flatten()
                        .filter(|(k, v)| v.is_string() && !own.contains_key(*k))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    if !missing.is_empty() {
                        patch["metadata"][field] = Value::Object(missing);
                    }
                }
                if patch["metadata"].as_object().is_some_and(|m| !m.is_empty()) {
                    self.patch(&n, patch).await?;
                }
                if self
                    .live(&m)?
                    .annotations
                    .contains_key(marks::NODE_BACKUP_KEY)
                {
                    self.annotate(&m, one(marks::NODE_BACKUP_KEY, Value::Null))
                        .await?;
                }
                Ok(())
            }
            Op::TaintNode {
                machine: m,
                node: n,
            } => self.taint(&machine(m), &node(n), true).await,
            Op::UntaintNode {
                machine: m,
                node: n,
            } => self.taint(&machine(m), &node(n), false).await,
            Op::AnswerRequest { machine: m, record } => {
                let m = machine(m);
                if self.live(&m)?.annotations.get(marks::ANSWERED_KEY) != Some(record) {
                    self.annotate(&m, one(marks::ANSWERED_KEY, json!(record)))
                        .await?;
                }
                Ok(())
            }
            Op::ReportRemediation {
                remediation,
                report,
            } => self.report(remediation, report).await,
            Op::MarkHostUnhealthy { host: h, .. } => {
                let h = host(h);
                if self.live(&h)?.annotations.contains_key(UNHEALTHY_KEY) {
                    return Ok(());
                }
                self.annotate(&h, one(UNHEALTHY_KEY, json!(UNHEALTHY_VALUE)))
                    .await
            }
            Op::HandOver {
                machine,
                conditions,
                message,
            } => {
                let now = crate::engine::rfc3339(jiff::Timestamp::now().as_second());
                self.patch_at(
                    &ObjectRef::new(kind::MACHINE, machine.clone()),
                    Some("status"),
                    json!({"status": conditions.hand_over(message, &now)}),
                )
                .await
            }
        }
    }

    /// One pass of the shared drain (`k8s::drain`) on the Node: cordon it if it is not, then
    /// evict what must go. An eviction a PodDisruptionBudget refuses now is tried again on
    /// the next pass (the protocol asks for the drain again while Pods are left), until
    /// `drain_timeout` fails the step.
    pub(super) async fn drain(&mut self, node: &ObjectRef) -> Result<(), BackendError> {
        let home = self.live(node)?.home.clone();
        let ep = self
            .endpoint(&home)
            .ok_or_else(|| BackendError::NoSuchObject {
                object: node.clone(),
            })?;
        let mut drainer = Drainer::new(ep.client.clone(), drain_options(self.options.timeout))
            .named(ep.server.clone());
        if let Some(g) = &self.guard {
            drainer = drainer.guarded(g.clone());
        }
        if let Cordon::Refused(why) = drainer.cordon(&node.name).await? {
            return Err(BackendError::Api(format!("{node}: {why}")));
        }
        let now = jiff::Timestamp::now().as_second();
        match drainer.evict_step(&node.name, now).await? {
            Outcome::Failed(why) => Err(BackendError::Api(format!("{node}: {why}"))),
            Outcome::Drained => Ok(()),
            Outcome::Draining(p) => {
                for pod in &p.refused {
                    tracing::warn!(node = %node.name, pod = %pod, why = drainer.last_refusal(&node.name, pod).unwrap_or_default(), "eviction refused for now: tried again next pass");
                }
                Ok(())
            }
        }
    }
}

/// The metal3 family's drain: no Pod is ever deleted to get round a PodDisruptionBudget (every
/// namespace protected) and a refused eviction is tried again every pass for as long as the
/// step's `drain_timeout` allows; running Job Pods are deleted like CKE deletes unprotected
/// ones; no dry run and no cordon annotation (the family never uncordons: a drained Node stays
/// drained, a power-cycled one is deleted and registers anew).
pub(super) fn drain_options(timeout: Duration) -> drain::Options {
    drain::Options {
        protected_namespaces: drain::Protection::All,
        protected_job_pods: drain::Protection::Nothing,
        evict_retries: u32::MAX,
        evict_interval: 0,
        cordon_annotation: None,
        check_before_cordon: false,
        timeout,
    }
}

pub(super) fn one(key: &str, value: Value) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(key.to_owned(), value);
    m
}
