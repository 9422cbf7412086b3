//! The Pod eviction subresource (`POST /api/v1/namespaces/NS/pods/NAME/eviction`, policy/v1
//! Eviction) as kube-apiserver's `pkg/registry/core/pod/storage/eviction.go` answers it:
//! a Pod that cannot disrupt anything (Pending, Succeeded, Failed, already being deleted) is
//! deleted at once; otherwise the PodDisruptionBudgets of its namespace that select it decide:
//! none → deleted; more than one → 500; one with no disruption allowed → 429 with the
//! apiserver's body; else the budget's `status.disruptionsAllowed` goes down by one, the Pod is
//! recorded in its `status.disruptedPods`, and the Pod is deleted. The answer is a success
//! `Status` with code 201.
//!
//! What is simplified: no disruption controller (a budget's status is what the test wrote,
//! missing `disruptionsAllowed` = 0, `observedGeneration` is not compared), no
//! `unhealthyPodEvictionPolicy`, and the delete is immediate (no grace period).

use crate::kube::resource::{POD, POD_DISRUPTION_BUDGET};
use crate::kube::selector::{FieldSelector, LabelSelector, label_selector_object};
use crate::kube::status::ApiError;
use crate::kube::store::{Key, Store, WriteOpts, now};
use serde_json::{Value, json};

/// The apiserver's message for a refused eviction (`errors.NewTooManyRequests`).
pub const REFUSED: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

pub(crate) fn evict(
    store: &mut Store,
    ns: &str,
    name: &str,
    body: &Value,
    mut opts: WriteOpts,
) -> Result<Value, ApiError> {
    check_body(body, name)?;
    let options = body.get("deleteOptions").cloned();
    if options
        .as_ref()
        .and_then(|o| o.get("dryRun"))
        .and_then(Value::as_array)
        .is_some_and(|d| d.iter().any(|v| v == "All"))
    {
        opts.dry_run = true;
    }
    let pod = store.get(&POD, ns, name)?;
    // The delete's preconditions are checked before any budget is spent.
    let wanted_uid = options
        .as_ref()
        .and_then(|o| o.pointer("/preconditions/uid"))
        .and_then(Value::as_str);
    if let Some(uid) = wanted_uid {
        let actual = pod
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if uid != actual {
            return Err(ApiError::conflict(
                &POD,
                name,
                &format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}"
                ),
            ));
        }
    }
    if !can_ignore_budget(&pod) {
        let labels = json!({ "metadata": { "labels": pod.pointer("/metadata/labels").cloned().unwrap_or(json!({})) } });
        let budgets: Vec<(String, Value)> = store
            .select(
                &POD_DISRUPTION_BUDGET,
                Some(ns),
                &LabelSelector::default(),
                &FieldSelector::default(),
            )
            .into_iter()
            .filter(|(_, b)| selects(b, &labels))
            .map(|(k, b)| (k.name.clone(), b.clone()))
            .collect();
        match budgets.as_slice() {
            [] => {}
            [(budget, b)] => {
                let allowed = b
                    .pointer("/status/disruptionsAllowed")
                    .and_then(Value::as_i64)
                    .unwrap_or(0);
                if allowed < 0 {
                    return Err(ApiError::new(
                        403,
                        "Forbidden",
                        "pdb disruptions allowed is negative",
                        Value::Null,
                    ));
                }
                if allowed == 0 {
                    return Err(refused(budget, b));
                }
                if !opts.dry_run {
                    let key = Key::new(&POD_DISRUPTION_BUDGET, ns, budget);
                    let pod_name = name.to_string();
                    store.write_behind(&POD_DISRUPTION_BUDGET, &key, |o| {
                        o["status"]["disruptionsAllowed"] = json!(allowed - 1);
                        if !o["status"]["disruptedPods"].is_object() {
                            o["status"]["disruptedPods"] = json!({});
                        }
                        o["status"]["disruptedPods"][pod_name] = json!(now());
                    });
                }
            }
            _ => {
                return Err(ApiError::new(
                    500,
                    "InternalError",
                    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
                    Value::Null,
                ));
            }
        }
    }
    store.delete(&POD, ns, name, options.as_ref(), opts)?;
    Ok(json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": 201,
    }))
}

/// The body must be an Eviction (policy/v1 or v1beta1) naming the Pod of the URL.
fn check_body(body: &Value, name: &str) -> Result<(), ApiError> {
    if !body.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request is not a JSON object",
        ));
    }
    if let Some(v) = body.get("apiVersion").and_then(Value::as_str)
        && v != "policy/v1"
        && v != "policy/v1beta1"
    {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({v}) does not match the expected API version (policy/v1)"
        )));
    }
    if let Some(k) = body.get("kind").and_then(Value::as_str)
        && k != "Eviction"
    {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({k}) does not match the expected kind (Eviction)"
        )));
    }
    let body_name = body
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if body_name != name {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Eviction object",
        ));
    }
    Ok(())
}

/// Pods whose eviction disrupts nothing more: not running yet, finished, or going already.
fn can_ignore_budget(pod: &Value) -> bool {
    let phase = pod
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or_default();
    matches!(phase, "Pending" | "Succeeded" | "Failed")
        || pod
            .pointer("/metadata/deletionTimestamp")
            .is_some_and(|t| !t.is_null())
}

/// policy/v1: a null selector selects nothing, an empty one every Pod of the namespace.
fn selects(budget: &Value, pod_labels: &Value) -> bool {
    match budget.pointer("/spec/selector") {
        None | Some(Value::Null) => false,
        Some(sel) => label_selector_object(sel).is_ok_and(|s| s.matches(pod_labels)),
    }
}

fn refused(budget: &str, b: &Value) -> ApiError {
    let n = |f: &str| {
        b.pointer(&format!("/status/{f}"))
            .and_then(Value::as_i64)
            .unwrap_or(0)
    };
    ApiError::new(
        429,
        "TooManyRequests",
        REFUSED,
        json!({
            "causes": [{
                "reason": "DisruptionBudget",
                "message": format!(
                    "The disruption budget {budget} needs {} healthy pods and has {} currently",
                    n("desiredHealthy"),
                    n("currentHealthy")
                ),
            }],
        }),
    )
}
