//! The out-of-service taint on live Nodes (`Fencing::OutOfServiceTaint`): what `file.rs`'s
//! `apply()` does for [`Op::TaintNode`] and [`Op::UntaintNode`].
//!
//! A Node's taints are one list, and a merge patch replaces a list whole: so the Node is read
//! again just before (its taints now, and the resourceVersion to condition the patch on; the
//! uid must still be the one the pass read, else it is another Node of the same name), and the
//! patch carries that resourceVersion. A Node that changed in between is a 409, as any write.
//!
//! [`Op::TaintNode`]: crate::metal3::Op::TaintNode
//! [`Op::UntaintNode`]: crate::metal3::Op::UntaintNode

use super::{Inner, one, text};
use crate::engine::{BackendError, ObjectRef};
use crate::k8s::errors::{from_kube, nonsense};
use crate::metal3::{marks, objects};
use ::kube::Resource;
use ::kube::api::{DynamicObject, GetParams};
use ::kube::core::Request;
use serde_json::{Value, json};

impl Inner {
    /// Adds (`on`) or removes the out-of-service taint of `node`, recording it on `machine`
    /// first when adding and last when removing: a taint autorepair added is always one it
    /// knows to remove. Only a taint it adds is recorded: the Node is read again first, and one
    /// already tainted (by someone else: a record would name it otherwise) fences it all the
    /// same but is never claimed, so never removed by autorepair.
    pub(super) async fn taint(
        &mut self,
        machine: &ObjectRef,
        node: &ObjectRef,
        on: bool,
    ) -> Result<(), BackendError> {
        let recorded = self
            .live(machine)?
            .annotations
            .get(marks::NODE_TAINTED_KEY)
            .cloned();
        let ours = recorded.as_deref() == Some(node.name.as_str());
        if on {
            let now = self.node_now(node).await?;
            if objects::out_of_service(&now) {
                if !ours {
                    tracing::info!(node = %node, machine = %machine, "the Node is already out of service (someone else's taint): it is fenced, and the taint is not autorepair's to remove");
                }
                return Ok(());
            }
            if !ours {
                self.annotate(machine, one(marks::NODE_TAINTED_KEY, json!(node.name)))
                    .await?;
            }
            let stamp = jiff::Timestamp::now()
                .strftime("%Y-%m-%dT%H:%M:%SZ")
                .to_string();
            let taints = objects::with_out_of_service(&now, true, &stamp);
            if let Err(e) = self.patch(node, json!({"spec": {"taints": taints}})).await {
                // Not added: the record goes again where it can, so that a taint someone else
                // adds before the next pass is not taken for ours.
                if !ours
                    && let Err(undo) = self
                        .annotate(machine, one(marks::NODE_TAINTED_KEY, Value::Null))
                        .await
                {
                    tracing::warn!(node = %node, machine = %machine, error = %undo, "the taint was not added and its record could not be withdrawn: a taint on the Node before the next pass would count as autorepair's");
                }
                return Err(e);
            }
            return Ok(());
        }
        // A Node gone since (deleted by someone) has no taint left to remove.
        if self.live.contains_key(node) {
            let now = self.node_now(node).await?;
            if objects::out_of_service(&now) {
                let taints = objects::with_out_of_service(&now, false, "");
                self.patch(node, json!({"spec": {"taints": taints}}))
                    .await?;
            }
        }
        if recorded.is_some() {
            self.annotate(machine, one(marks::NODE_TAINTED_KEY, Value::Null))
                .await?;
        }
        Ok(())
    }

    /// The Node as it is now; the resourceVersion read becomes the one the next write on it is
    /// conditioned on.
    async fn node_now(&mut self, node: &ObjectRef) -> Result<Value, BackendError> {
        let live = self.live(node)?.clone();
        let ep = self
            .endpoint(&live.home)
            .ok_or_else(|| BackendError::NoSuchObject {
                object: node.clone(),
            })?;
        let req = Request::new(DynamicObject::url_path(&live.api, None))
            .get(&live.name, &GetParams::default())
            .map_err(|e| BackendError::Api(format!("{node}: cannot build the read: {e}")))?;
        let path = req.uri().to_string();
        let call = crate::k8s::errors::Call {
            object: Some(node),
            ..self.call("GET", &ep.server, &path, "nodes")
        };
        let body = match ep.client.request_text(req).await {
            Ok(b) => b,
            Err(::kube::Error::Api(s)) if s.code == 404 => {
                return Err(BackendError::NoSuchObject {
                    object: node.clone(),
                });
            }
            Err(e) => return Err(from_kube(e, &call)),
        };
        let now: Value =
            serde_json::from_str(&body).map_err(|e| nonsense(&call, &format!("not JSON: {e}")))?;
        if text(&now, "/metadata/uid") != Some(live.uid.as_str()) {
            return Err(BackendError::Api(format!(
                "{node}: it was registered again since this pass read it (another uid): nothing was written, {}",
                super::CONFLICT_HINT
            )));
        }
        let version = text(&now, "/metadata/resourceVersion")
            .ok_or_else(|| nonsense(&call, "the Node has no resourceVersion"))?
            .to_owned();
        if let Some(l) = self.live.get_mut(node) {
            l.resource_version = version;
        }
        Ok(now)
    }
}
