//! Fault injection: the next N requests that match answer an error, wait, or find their object
//! changed by someone else first.

use crate::kube::resource::Resource;
use crate::kube::status::ApiError;
use crate::serve::Filter;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// Which requests a fault applies to.
#[derive(Clone, Debug)]
enum Target {
    Any,
    /// The object's URL in any served version, and its subresources.
    Object {
        res: Resource,
        ns: String,
        name: String,
    },
    /// The collection's URL in any served version (list, watch, create); `ns` empty = any.
    Collection {
        res: Resource,
        ns: String,
    },
}

#[derive(Clone)]
pub(crate) enum Action {
    Respond(ApiError, Option<u32>),
    /// 409 Conflict naming the object the request addresses.
    Conflict,
    Delay(Duration),
    Mutate(Arc<dyn Fn(&mut Value) + Send + Sync>),
}

/// A fault to inject with [`crate::kube::FakeKube::fault`]. Built from what happens
/// ([`Fault::status`], [`Fault::conflict`], [`Fault::delay`], [`Fault::mutate`]) narrowed by
/// where ([`Fault::on_object`], [`Fault::on_collection`], [`Fault::on_path`]), which method
/// ([`Fault::method`]) and how often ([`Fault::times`], default once).
///
/// ```ignore
/// kube.fault(Fault::status(500).on_object(&BARE_METAL_HOST, "ns", "h1").method("PATCH").times(2));
/// ```
#[derive(Clone)]
pub struct Fault {
    /// Method and URL path (no query).
    filter: Filter,
    target: Target,
    /// Only requests bearing this token (`Authorization: Bearer TOKEN`): one client's
    /// partition while the others are served.
    token: Option<String>,
    pub(crate) times: usize,
    pub(crate) action: Action,
}

impl Fault {
    fn new(action: Action) -> Fault {
        Fault {
            filter: Filter::default(),
            target: Target::Any,
            token: None,
            times: 1,
            action,
        }
    }

    /// Answer `code` with the Status the apiserver uses for it (reason and message of
    /// `NewGenericServerResponse`; 429 carries `Retry-After: 1` and `retryAfterSeconds`).
    pub fn status(code: u16) -> Fault {
        let retry = (code == 429).then_some(1);
        Fault::new(Action::Respond(ApiError::generic(code), retry))
    }

    /// Answer this exact Status.
    pub fn error(err: ApiError) -> Fault {
        Fault::new(Action::Respond(err, None))
    }

    /// Answer 409 Conflict "the object has been modified" for the object the request names
    /// (the write is not applied).
    pub fn conflict() -> Fault {
        Fault::new(Action::Conflict)
    }

    /// Serve the request normally after `d`.
    pub fn delay(d: Duration) -> Fault {
        Fault::new(Action::Delay(d))
    }

    /// Before serving the request, change the object it names as another controller would
    /// (new resourceVersion, MODIFIED event); then serve it normally, so a write carrying the
    /// old resourceVersion meets a real conflict.
    pub fn mutate(f: impl Fn(&mut Value) + Send + Sync + 'static) -> Fault {
        Fault::new(Action::Mutate(Arc::new(f)))
    }

    /// The `Retry-After` seconds (header and `details.retryAfterSeconds`) of a [`Fault::status`]
    /// answer; 429 has 1 by default. kube's client retries 429, 503 and 504 by itself and
    /// honours it: 0 keeps tests fast.
    pub fn retry_after(mut self, seconds: u32) -> Fault {
        if let Action::Respond(e, retry) = &mut self.action {
            *retry = Some(seconds);
            if let Some(d) = e.details.as_object_mut() {
                d.insert("retryAfterSeconds".into(), seconds.into());
            }
        }
        self
    }

    /// Only requests for this object (any served version, subresources included).
    pub fn on_object(mut self, res: &Resource, ns: &str, name: &str) -> Fault {
        self.target = Target::Object {
            res: *res,
            ns: if res.namespaced {
                ns.to_string()
            } else {
                String::new()
            },
            name: name.to_string(),
        };
        self
    }

    /// Only requests for this collection (list, watch, create); `ns` empty = any namespace.
    pub fn on_collection(mut self, res: &Resource, ns: &str) -> Fault {
        self.target = Target::Collection {
            res: *res,
            ns: ns.to_string(),
        };
        self
    }

    /// Only requests whose URL path is `path` (a trailing `*` matches a prefix).
    pub fn on_path(mut self, path: &str) -> Fault {
        self.filter.set_path(path);
        self
    }

    /// Only requests from the client that authenticates with this bearer token (each
    /// replica's kubeconfig its own): that client is cut off, the others are not.
    pub fn from_client(mut self, token: &str) -> Fault {
        self.token = Some(token.to_string());
        self
    }

    /// Only requests with this HTTP method (`GET`, `PATCH`, ...).
    pub fn method(mut self, m: &str) -> Fault {
        self.filter.set_method(m);
        self
    }

    /// The next `n` matching requests (default 1).
    pub fn times(mut self, n: usize) -> Fault {
        self.times = n;
        self
    }

    /// Whether a request matches: method, path, bearer token (empty: none), and the resource
    /// route it parsed to (resource, namespace or None, name or None).
    pub(crate) fn matches(
        &self,
        method: &str,
        path: &str,
        token: &str,
        route: Option<(&Resource, Option<&str>, Option<&str>)>,
    ) -> bool {
        if !self.filter.matches(method, path) || self.token.as_deref().is_some_and(|t| t != token) {
            return false;
        }
        match &self.target {
            Target::Any => true,
            Target::Object { res, ns, name } => route.is_some_and(|(r, rns, rname)| {
                same(r, res) && rns.unwrap_or_default() == ns && rname == Some(name.as_str())
            }),
            Target::Collection { res, ns } => route.is_some_and(|(r, rns, rname)| {
                same(r, res) && rname.is_none() && (ns.is_empty() || rns == Some(ns.as_str()))
            }),
        }
    }
}

fn same(a: &Resource, b: &Resource) -> bool {
    (a.group, a.plural) == (b.group, b.plural)
}
