//! `Status` bodies shaped like the real apiserver's (k8s.io/apimachinery/pkg/api/errors).

use crate::kube::resource::Resource;
use serde_json::{Value, json};

/// A failed request: HTTP code, `reason`, `message` and `details`, served as a `Status`.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    pub code: u16,
    pub reason: String,
    pub message: String,
    pub details: Value,
}

impl ApiError {
    pub fn new(code: u16, reason: &str, message: impl Into<String>, details: Value) -> Self {
        ApiError {
            code,
            reason: reason.to_string(),
            message: message.into(),
            details,
        }
    }

    /// The `Status` object the server sends.
    pub fn to_status(&self) -> Value {
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if !self.details.is_null() {
            s["details"] = self.details.clone();
        }
        s
    }

    /// A `Status` for `code` with the reason and default message the apiserver uses for it
    /// (`NewGenericServerResponse`), for fault injection.
    pub fn generic(code: u16) -> Self {
        let (reason, message) = match code {
            400 => (
                "BadRequest",
                "the server rejected our request for an unknown reason",
            ),
            401 => (
                "Unauthorized",
                "the server has asked for the client to provide credentials",
            ),
            403 => (
                "Forbidden",
                "the server does not allow access to the requested resource",
            ),
            404 => (
                "NotFound",
                "the server could not find the requested resource",
            ),
            405 => (
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource",
            ),
            409 => ("Conflict", "the server reported a conflict"),
            410 => ("Expired", "the resource version is too old"),
            422 => (
                "Invalid",
                "the server rejected our request due to an error in our request",
            ),
            429 => (
                "TooManyRequests",
                "the server has received too many requests and has asked us to try again later",
            ),
            500 => (
                "InternalError",
                "an error on the server (\"injected fault\") has prevented the request from succeeding",
            ),
            503 => (
                "ServiceUnavailable",
                "the server is currently unable to handle the request",
            ),
            504 => (
                "Timeout",
                "the server was unable to return a response in the time allotted, but may still be processing the request",
            ),
            _ => (
                "",
                "the server responded with the status code but did not return more information",
            ),
        };
        let details = if code == 429 {
            json!({ "retryAfterSeconds": 1 })
        } else {
            json!({})
        };
        ApiError::new(code, reason, message, details)
    }

    pub fn not_found(res: &Resource, name: &str) -> Self {
        ApiError::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", res.group_resource()),
            details(res, name),
        )
    }

    pub fn already_exists(res: &Resource, name: &str) -> Self {
        ApiError::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", res.group_resource()),
            details(res, name),
        )
    }

    /// `Operation cannot be fulfilled on machines.cluster.x-k8s.io "m1": <why>`.
    pub fn conflict(res: &Resource, name: &str, why: &str) -> Self {
        ApiError::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                res.group_resource()
            ),
            details(res, name),
        )
    }

    /// The optimistic-concurrency conflict (stale `metadata.resourceVersion`).
    pub fn modified(res: &Resource, name: &str) -> Self {
        Self::conflict(
            res,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(400, "BadRequest", message, Value::Null)
    }

    /// 422 Invalid with one field cause, like `errors.NewInvalid`.
    pub fn invalid(res: &Resource, name: &str, field: &str, cause: &str, detail: &str) -> Self {
        let mut d = details(res, name);
        d["kind"] = json!(res.kind);
        d["causes"] = json!([{ "reason": cause, "message": detail, "field": field }]);
        ApiError::new(
            422,
            "Invalid",
            format!(
                "{} \"{name}\" is invalid: {field}: {detail}",
                res.group_kind()
            ),
            d,
        )
    }

    pub fn method_not_allowed() -> Self {
        Self::generic(405)
    }
}

fn details(res: &Resource, name: &str) -> Value {
    json!({ "name": name, "group": res.group, "kind": res.plural })
}
