//! The Ganeti cluster the command-line tests play on the fake RAPI of crates/testsupport
//! (HTTPS on 127.0.0.1, one connection per request, HTTP basic auth): two nodes, n1 offline with
//! two diskless instances on it, under a cluster-wide failover policy, so a pass has writes to
//! make.

use serde_json::{Value, json};
pub use testsupport::rapi::FakeRapi;

/// The cluster's answer to a read, `None` for anything else.
pub fn cluster(path: &str) -> Option<Value> {
    let p = path.split('?').next().unwrap_or("");
    let instance = |name: &str| json!([[0, name], [0, []], [0, "up"], [0, "diskless"]]);
    Some(match p {
        "/2/info" => json!({"name": "c.example.test",
            "tags": ["ganeti:watcher:autorepair:failover"]}),
        "/2/groups" => json!([{"name": "default", "uuid": "g1", "tags": []}]),
        "/2/query/node" => json!({
            "fields": ["name", "offline", "drained", "vm_capable", "group.uuid", "tags",
                       "pinst_list", "sinst_list", "mtime"],
            "data": [
                [[0, "n1"], [0, true], [0, false], [0, true], [0, "g1"], [0, []],
                 [0, ["a", "b"]], [0, []], [0, 1700000000.5]],
                [[0, "n2"], [0, false], [0, false], [0, true], [0, "g1"], [0, []],
                 [0, []], [0, []], [0, 1700000000.5]]]}),
        "/2/query/instance" => json!({
            "fields": ["name", "tags", "admin_state", "disk_template"],
            "data": [instance("a"), instance("b")]}),
        "/2/jobs" => json!([]),
        // What a pass that writes watches for a suspend given elsewhere.
        "/2/tags" => json!(["ganeti:watcher:autorepair:failover"]),
        "/2/groups/default/tags" => json!([]),
        _ => return None,
    })
}

pub fn unauthorized() -> (u16, String) {
    (401, r#"{"code":401,"message":"Unauthorized"}"#.into())
}
