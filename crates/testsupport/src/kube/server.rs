//! The HTTP side: hyper on a tokio runtime of its own, URL routing, the verbs, discovery,
//! fault injection and streaming watch bodies.

use crate::kube::RecordedRequest;
use crate::kube::fault::Action;
use crate::kube::resource::Resource;
use crate::kube::selector::{FieldSelector, LabelSelector};
use crate::kube::status::ApiError;
use crate::kube::store::{Key, Store, Watcher, WriteOpts, partial_metadata};
use crate::kube::table;
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body::Frame;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::mpsc;

pub(crate) type Shared = Arc<Mutex<Store>>;
type Body = BoxBody<Bytes, Infallible>;

/// The watch timeout when the client names none (the apiserver picks 30–60 min).
const DEFAULT_WATCH_TIMEOUT: Duration = Duration::from_secs(1800);

/// What a URL path names.
#[derive(Debug)]
enum Route {
    Version,
    Api,
    Apis,
    Group(String),
    GroupVersion(String, String),
    Resource(ResRoute),
    NotFound,
}

#[derive(Debug)]
struct ResRoute {
    res: Resource,
    version: &'static str,
    namespace: Option<String>,
    name: Option<String>,
    status: bool,
    /// `pods/NAME/eviction`.
    eviction: bool,
}

fn route(store: &Store, path: &str) -> Route {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segs.as_slice() {
        ["version"] => return Route::Version,
        ["api"] => return Route::Api,
        ["apis"] => return Route::Apis,
        ["api", v] => return Route::GroupVersion(String::new(), v.to_string()),
        ["apis", g] => return Route::Group(g.to_string()),
        ["apis", g, v] => return Route::GroupVersion(g.to_string(), v.to_string()),
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return Route::NotFound,
    };
    let (namespace, plural, name, sub) = match rest {
        ["namespaces", ns, plural, tail @ ..] if namespaced_plural(store, group, plural) => {
            (Some(ns.to_string()), *plural, tail.first(), tail.get(1))
        }
        [plural, tail @ ..] => (None, *plural, tail.first(), tail.get(1)),
        [] => return Route::NotFound,
    };
    let tail_len = rest.len() - if namespace.is_some() { 3 } else { 1 };
    if tail_len > 2 {
        return Route::NotFound;
    }
    let Some((res, version)) = store.resources.iter().find_map(|r| {
        (r.group == group && r.plural == plural)
            .then(|| r.versions.iter().find(|v| **v == version))
            .flatten()
            .map(|v| (*r, *v))
    }) else {
        return Route::NotFound;
    };
    if namespace.is_some() && !res.namespaced {
        return Route::NotFound;
    }
    if name.is_some() && res.namespaced && namespace.is_none() {
        return Route::NotFound;
    }
    let (status, eviction) = match sub {
        None => (false, false),
        Some(&"status") if res.status_subresource => (true, false),
        Some(&"eviction") if (res.group, res.plural) == ("", "pods") => (false, true),
        Some(_) => return Route::NotFound,
    };
    Route::Resource(ResRoute {
        res,
        version,
        namespace,
        name: name.map(|n| n.to_string()),
        status,
        eviction,
    })
}

fn namespaced_plural(store: &Store, group: &str, plural: &str) -> bool {
    store
        .resources
        .iter()
        .any(|r| r.group == group && r.plural == plural && r.namespaced)
}

/// An answer before it becomes an HTTP response.
enum Reply {
    Json(u16, Value, Option<u32>),
    Watch(mpsc::UnboundedReceiver<Bytes>, Duration),
}

impl From<ApiError> for Reply {
    fn from(e: ApiError) -> Reply {
        Reply::Json(e.code, e.to_status(), None)
    }
}

fn query(q: Option<&str>) -> HashMap<String, String> {
    form_urlencoded::parse(q.unwrap_or_default().as_bytes())
        .into_owned()
        .collect()
}

/// One HTTP request, start to end.
pub(crate) async fn handle(
    shared: Shared,
    req: Request<hyper::body::Incoming>,
    server_addr: String,
) -> Result<Response<Body>, Infallible> {
    let (parts, body) = req.into_parts();
    let bytes = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let method = parts.method.clone();
    let path = parts.uri.path().to_string();
    let q = query(parts.uri.query());
    let header_str = |h: header::HeaderName| {
        parts
            .headers
            .get(h)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    let content_type = header_str(header::CONTENT_TYPE);
    let accept = header_str(header::ACCEPT);
    let authorization = header_str(header::AUTHORIZATION);
    let token = authorization.strip_prefix("Bearer ").unwrap_or_default();

    // Record, then look for a fault.
    let outcome = {
        let mut store = shared.lock().expect("store lock");
        store.requests.push(RecordedRequest {
            method: method.to_string(),
            path: path.clone(),
            query: parts.uri.query().unwrap_or_default().to_string(),
            content_type: content_type.clone(),
            body: String::from_utf8_lossy(&bytes).into_owned(),
            token: token.to_string(),
        });
        take_fault(&mut store, method.as_str(), &path, token)
    };
    let action = match outcome {
        Outcome::Serve => None,
        Outcome::Answer(reply) => Some(reply),
        Outcome::Delay(d) => {
            tokio::time::sleep(d).await;
            None
        }
    };

    let reply = match action {
        Some(r) => r,
        None => {
            let mut store = shared.lock().expect("store lock");
            let r = route(&store, &path);
            serve(
                &mut store,
                &method,
                r,
                &q,
                &content_type,
                &accept,
                &bytes,
                &server_addr,
            )
        }
    };
    Ok(respond(reply))
}

enum Outcome {
    Serve,
    Answer(Reply),
    Delay(Duration),
}

/// Uses up the first fault that matches the request, if any, and says what to do.
fn take_fault(store: &mut Store, method: &str, path: &str, token: &str) -> Outcome {
    let r = route(store, path);
    let rr = match &r {
        Route::Resource(rr) => Some((&rr.res, rr.namespace.as_deref(), rr.name.as_deref())),
        _ => None,
    };
    let hit = store
        .faults
        .take(|f| f.matches(method, path, token, rr))
        .map(|f| f.action);
    match (hit, r) {
        (None, _) => Outcome::Serve,
        (Some(Action::Conflict), Route::Resource(rr)) => Outcome::Answer(Reply::from(
            ApiError::modified(&rr.res, rr.name.as_deref().unwrap_or_default()),
        )),
        (Some(Action::Conflict), _) => Outcome::Answer(ApiError::generic(409).into()),
        (Some(Action::Respond(e, retry)), _) => {
            Outcome::Answer(Reply::Json(e.code, e.to_status(), retry))
        }
        (Some(Action::Delay(d)), _) => Outcome::Delay(d),
        (Some(Action::Mutate(f)), Route::Resource(rr)) => {
            if let Some(name) = &rr.name {
                let key = Key::new(&rr.res, rr.namespace.as_deref().unwrap_or_default(), name);
                store.write_behind(&rr.res, &key, |o| f(o));
            }
            Outcome::Serve
        }
        (Some(Action::Mutate(_)), _) => Outcome::Serve,
    }
}

fn respond(reply: Reply) -> Response<Body> {
    match reply {
        Reply::Json(code, v, retry) => {
            let mut b = Response::builder()
                .status(StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
                .header(header::CONTENT_TYPE, "application/json");
            if let Some(s) = retry {
                b = b.header(header::RETRY_AFTER, s.to_string());
            }
            let body = serde_json::to_vec(&v).expect("JSON serializes");
            b.body(Full::new(Bytes::from(body)).boxed())
                .expect("response builds")
        }
        Reply::Watch(rx, timeout) => Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "application/json")
            .body(
                WatchBody {
                    rx,
                    deadline: Box::pin(tokio::time::sleep(timeout)),
                }
                .boxed(),
            )
            .expect("response builds"),
    }
}

/// A watch response: one JSON event a line until the timeout, the server's end, or
/// `close_watches`.
struct WatchBody {
    rx: mpsc::UnboundedReceiver<Bytes>,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl http_body::Body for WatchBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if let Poll::Ready(Some(b)) = self.rx.poll_recv(cx) {
            return Poll::Ready(Some(Ok(Frame::data(b))));
        }
        if self.deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(b)) => Poll::Ready(Some(Ok(Frame::data(b)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

fn is_true(q: &HashMap<String, String>, k: &str) -> bool {
    matches!(q.get(k).map(String::as_str), Some("true" | "1"))
}

#[allow(clippy::too_many_arguments)]
fn serve(
    store: &mut Store,
    method: &Method,
    r: Route,
    q: &HashMap<String, String>,
    content_type: &str,
    accept: &str,
    body: &[u8],
    server_addr: &str,
) -> Reply {
    if !matches!(r, Route::Resource(_) | Route::NotFound) && method != Method::GET {
        return ApiError::method_not_allowed().into();
    }
    let rr = match r {
        Route::NotFound => return ApiError::generic(404).into(),
        Route::Resource(rr) => rr,
        Route::Version => return Reply::Json(200, version_info(), None),
        Route::Api => {
            return Reply::Json(
                200,
                json!({
                    "kind": "APIVersions",
                    "versions": ["v1"],
                    "serverAddressByClientCIDRs": [
                        { "clientCIDR": "0.0.0.0/0", "serverAddress": server_addr }
                    ],
                }),
                None,
            );
        }
        Route::Apis => {
            let groups: Vec<Value> = groups(store).iter().map(|g| api_group(store, g)).collect();
            return Reply::Json(
                200,
                json!({ "kind": "APIGroupList", "apiVersion": "v1", "groups": groups }),
                None,
            );
        }
        Route::Group(g) => {
            if g.is_empty() || !groups(store).contains(&g.as_str()) {
                return ApiError::generic(404).into();
            }
            let mut v = api_group(store, &g);
            v["kind"] = json!("APIGroup");
            v["apiVersion"] = json!("v1");
            return Reply::Json(200, v, None);
        }
        Route::GroupVersion(g, v) => {
            let resources: Vec<Value> = store
                .resources
                .iter()
                .filter(|r| r.group == g && r.versions.contains(&v.as_str()))
                .flat_map(|r| r.discovery_entries())
                .collect();
            if resources.is_empty() {
                return ApiError::generic(404).into();
            }
            let gv = if g.is_empty() {
                v.clone()
            } else {
                format!("{g}/{v}")
            };
            return Reply::Json(
                200,
                json!({
                    "kind": "APIResourceList",
                    "apiVersion": "v1",
                    "groupVersion": gv,
                    "resources": resources,
                }),
                None,
            );
        }
    };
    let opts = WriteOpts {
        dry_run: q.get("dryRun").is_some_and(|d| d == "All"),
        via_api: true,
    };
    let meta_only = accept.contains("as=PartialObjectMetadata");
    // kubectl's human-readable output: a Table for reads (writes answer the object, as the
    // apiserver does, whatever is asked).
    let as_table = (method == Method::GET && table::wanted(accept))
        .then(|| table::Include::parse(q.get("includeObject").map(String::as_str)));
    let ns = rr.namespace.clone().unwrap_or_default();
    let show = |store: &Store, v: &Value| {
        let o = store.in_version(&rr.res, v, rr.version);
        match as_table {
            Some(include) => table::of_object(&rr.res, rr.version, &o, include),
            None if meta_only => partial_metadata(&o),
            None => o,
        }
    };
    let result: Result<(u16, Value), ApiError> = match (method.clone(), rr.name.clone()) {
        (Method::POST, Some(name)) if rr.eviction => parse_json(body)
            .and_then(|b| crate::kube::eviction::evict(store, &ns, &name, &b, opts))
            .map(|v| (201, v)),
        (_, Some(_)) if rr.eviction => Err(ApiError::method_not_allowed()),
        (Method::GET, Some(name)) => store
            .get(&rr.res, &ns, &name)
            .map(|v| (200, show(store, &v))),
        (Method::GET, None) if is_true(q, "watch") => {
            return match watch(store, &rr, q, meta_only, as_table) {
                Ok(reply) => reply,
                Err(e) => e.into(),
            };
        }
        (Method::GET, None) => list(store, &rr, q, meta_only).map(|v| match as_table {
            Some(include) => (200, table::of_list(&rr.res, rr.version, &v, include)),
            None => (200, v),
        }),
        (Method::POST, None) if !rr.status => parse_json(body)
            .and_then(|b| store.create(&rr.res, rr.version, rr.namespace.as_deref(), b, opts))
            .map(|v| (201, show(store, &v))),
        (Method::PUT, Some(name)) => parse_json(body)
            .and_then(|b| store.replace(&rr.res, rr.version, &ns, &name, b, rr.status, opts))
            .map(|v| (200, show(store, &v))),
        (Method::PATCH, Some(name)) => patch(store, &rr, &ns, &name, q, content_type, body, opts)
            .map(|(code, v)| (code, show(store, &v))),
        (Method::DELETE, Some(name)) if !rr.status => {
            let options = if body.is_empty() {
                Ok(None)
            } else {
                parse_json(body).map(Some)
            };
            options
                .and_then(|o| store.delete(&rr.res, &ns, &name, o.as_ref(), opts))
                .map(|v| (200, show(store, &v)))
        }
        _ => Err(ApiError::method_not_allowed()),
    };
    match result {
        Ok((code, v)) => Reply::Json(code, v, None),
        Err(e) => e.into(),
    }
}

fn parse_json(body: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding request body: {e}")))
}

const PATCH_TYPES: &str =
    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml";

#[allow(clippy::too_many_arguments)]
fn patch(
    store: &mut Store,
    rr: &ResRoute,
    ns: &str,
    name: &str,
    q: &HashMap<String, String>,
    content_type: &str,
    body: &[u8],
    opts: WriteOpts,
) -> Result<(u16, Value), ApiError> {
    let ctype = content_type.split(';').next().unwrap_or_default().trim();
    let res = &rr.res;
    let unsupported = || {
        let accepted = if res.custom {
            PATCH_TYPES.to_string()
        } else {
            format!("{PATCH_TYPES}, application/strategic-merge-patch+json")
        };
        ApiError::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {accepted}"
            ),
            Value::Null,
        )
    };
    let current = store.get(res, ns, name);
    match ctype {
        "application/apply-patch+yaml" => {
            if q.get("fieldManager").is_none_or(|m| m.is_empty()) {
                return Err(ApiError::new(
                    422,
                    "Invalid",
                    "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
                    json!({
                        "group": "meta.k8s.io",
                        "kind": "PatchOptions",
                        "causes": [{
                            "reason": "FieldValueRequired",
                            "message": "Required value: is required for apply patch",
                            "field": "fieldManager",
                        }],
                    }),
                ));
            }
            let mut applied: Value = serde_json::from_slice(body)
                .or_else(|_| serde_yaml_ng::from_slice(body))
                .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
            if !applied.is_object() {
                return Err(ApiError::bad_request("error decoding YAML: not an object"));
            }
            match current {
                Err(_) => {
                    if applied.pointer("/metadata/name").is_none() {
                        applied["metadata"]["name"] = json!(name);
                    }
                    if applied.pointer("/metadata/name").and_then(Value::as_str) != Some(name) {
                        return Err(ApiError::bad_request(format!(
                            "the name of the object ({}) does not match the name on the URL ({name})",
                            applied.pointer("/metadata/name").unwrap_or(&Value::Null)
                        )));
                    }
                    let ns = res.namespaced.then_some(ns);
                    store
                        .create(res, rr.version, ns, applied, opts)
                        .map(|v| (201, v))
                }
                Ok(current) => {
                    let mut doc = store.in_version(res, &current, rr.version);
                    json_patch::merge(&mut doc, &applied);
                    let new = store.to_storage(res, doc, rr.version);
                    store
                        .finish_update(res, ns, name, current, new, rr.status, opts)
                        .map(|v| (200, v))
                }
            }
        }
        "application/merge-patch+json"
        | "application/strategic-merge-patch+json"
        | "application/json-patch+json" => {
            if ctype == "application/strategic-merge-patch+json" && res.custom {
                return Err(unsupported());
            }
            let current = current?;
            let mut doc = store.in_version(res, &current, rr.version);
            if ctype == "application/json-patch+json" {
                let p: json_patch::Patch = serde_json::from_slice(body)
                    .map_err(|e| ApiError::bad_request(e.to_string()))?;
                json_patch::patch(&mut doc, &p).map_err(|e| {
                    ApiError::new(
                        422,
                        "Invalid",
                        "the server rejected our request due to an error in our request",
                        json!({ "causes": [{ "reason": "UnexpectedServerResponse", "message": e.to_string() }] }),
                    )
                })?;
            } else {
                let p = parse_json(body)?;
                if !p.is_object() {
                    return Err(ApiError::bad_request("invalid JSON Patch"));
                }
                json_patch::merge(&mut doc, &p);
            }
            if !doc.is_object() {
                return Err(ApiError::bad_request(
                    "the patched object is not a JSON object",
                ));
            }
            let new = store.to_storage(res, doc, rr.version);
            store
                .finish_update(res, ns, name, current, new, rr.status, opts)
                .map(|v| (200, v))
        }
        _ => Err(unsupported()),
    }
}

fn selectors(
    q: &HashMap<String, String>,
    res: &Resource,
) -> Result<(LabelSelector, FieldSelector), ApiError> {
    let labels = LabelSelector::parse(q.get("labelSelector").map_or("", String::as_str))
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let fields = FieldSelector::parse_for(q.get("fieldSelector").map_or("", String::as_str), res)
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    Ok((labels, fields))
}

fn list(
    store: &Store,
    rr: &ResRoute,
    q: &HashMap<String, String>,
    meta_only: bool,
) -> Result<Value, ApiError> {
    let (labels, fields) = selectors(q, &rr.res)?;
    let after = q.get("continue").cloned().unwrap_or_default();
    let limit: usize = q
        .get("limit")
        .and_then(|l| l.parse().ok())
        .filter(|l| *l > 0)
        .unwrap_or(usize::MAX);
    // The continue token is the last key served, "namespace/name" (namespace empty when
    // cluster-scoped); neither part can hold a '/'.
    let after = match after.split_once('/') {
        Some(key) => Some(key),
        None if after.is_empty() => None,
        None => return Err(ApiError::bad_request("malformed continue token")),
    };
    let selected = store.select_after(&rr.res, rr.namespace.as_deref(), &labels, &fields, after);
    let page: Vec<_> = selected.iter().take(limit).collect();
    let items: Vec<Value> = page
        .iter()
        .map(|(_, v)| {
            let o = store.in_version(&rr.res, v, rr.version);
            if meta_only { partial_metadata(&o) } else { o }
        })
        .collect();
    let mut metadata = json!({ "resourceVersion": store.rv.to_string() });
    if selected.len() > page.len()
        && let Some((k, _)) = page.last()
    {
        metadata["continue"] = json!(format!("{}/{}", k.namespace, k.name));
        metadata["remainingItemCount"] = json!(selected.len() - page.len());
    }
    let (kind, api_version) = if meta_only {
        (
            "PartialObjectMetadataList".to_string(),
            "meta.k8s.io/v1".to_string(),
        )
    } else {
        (
            format!("{}List", rr.res.kind),
            rr.res.api_version(rr.version),
        )
    };
    Ok(json!({ "kind": kind, "apiVersion": api_version, "metadata": metadata, "items": items }))
}

fn watch(
    store: &mut Store,
    rr: &ResRoute,
    q: &HashMap<String, String>,
    meta_only: bool,
    table: Option<table::Include>,
) -> Result<Reply, ApiError> {
    let (labels, fields) = selectors(q, &rr.res)?;
    let timeout = q
        .get("timeoutSeconds")
        .and_then(|t| t.parse().ok())
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_WATCH_TIMEOUT);
    let (tx, rx) = mpsc::unbounded_channel();
    let w = Watcher {
        res: rr.res,
        version: rr.version,
        namespace: rr.namespace.clone(),
        labels,
        fields,
        meta_only,
        table,
        tx,
    };
    store.start_watch(
        w,
        q.get("resourceVersion").map(String::as_str),
        is_true(q, "sendInitialEvents"),
    )?;
    Ok(Reply::Watch(rx, timeout))
}

/// Groups served, in registration order (the core group excluded).
fn groups(store: &Store) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for r in &store.resources {
        if !r.group.is_empty() && !out.contains(&r.group) {
            out.push(r.group);
        }
    }
    out
}

fn api_group(store: &Store, group: &str) -> Value {
    let mut versions: Vec<&str> = Vec::new();
    for r in store.resources.iter().filter(|r| r.group == group) {
        for v in r.versions {
            if !versions.contains(v) {
                versions.push(v);
            }
        }
    }
    let gv = |v: &str| json!({ "groupVersion": format!("{group}/{v}"), "version": v });
    json!({
        "name": group,
        "versions": versions.iter().map(|v| gv(v)).collect::<Vec<_>>(),
        "preferredVersion": gv(versions[0]),
    })
}

fn version_info() -> Value {
    json!({
        "major": "1",
        "minor": "34",
        "gitVersion": "v1.34.0-fake-kube",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-01-01T00:00:00Z",
        "goVersion": "go1.24",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}
