//! A stateful fake sabakan for tests, over real HTTP on 127.0.0.1 with an ephemeral port.
//!
//! It serves what autorepair uses, with sabakan's rules (sabakan 3.1.9): GraphQL
//! `POST /graphql` (`searchMachines` with the real `MachineParams` matching, `machine`,
//! `setMachineState`; variable defaults, omitted vs `null`; selections), and the REST API
//! `GET /api/v1/machines` (its query parameters; 404 when nothing matches),
//! `PUT|DELETE /api/v1/labels/<serial>/<name>` (label syntax, 400/404),
//! `GET|PUT /api/v1/state/<serial>` (permitted transitions), `PUT /api/v1/retire-date/<serial>`
//! and `DELETE /api/v1/machines/<serial>`. Machines live in memory, in serial order as
//! sabakan's etcd keys are. Every request is recorded; faults can be injected.
//!
//! What is simplified: no IPAM (addresses come from the builder or from rack and index), no
//! machine registration over HTTP (501), GraphQL without fragments, directives or
//! introspection, and an error body of `{"status","error"}` only.
//!
//! ```ignore
//! let sabakan = FakeSabakan::start();
//! sabakan.insert(machine("s1").rack(1).role("cs").state(State::Unhealthy));
//! // point the client at sabakan.url()
//! ```

mod fault;
mod graphql;
mod machine;
mod params;
mod server;

pub use fault::Fault;
pub use machine::{Machine, State, StateError, is_valid_label_name, is_valid_label_value, machine};
pub use params::{MachineParams, matches};

use crate::serve::{Faults, Options, Server};
use jiff::Timestamp;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// One request the server received.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedRequest {
    pub method: String,
    /// The URL path as sent (not decoded), without the query.
    pub path: String,
    pub query: String,
    pub content_type: String,
    /// `X-Sabakan-User`, which sabakan writes into its audit log.
    pub user: String,
    pub body: String,
}

/// The fake's state, shared with the server thread.
pub(crate) struct World {
    pub machines: BTreeMap<String, Machine>,
    pub clock: Option<Timestamp>,
    pub requests: Vec<RecordedRequest>,
    pub faults: Faults<Fault>,
    /// Writes are refused with 403, as from an address outside sabakan's allowed networks.
    pub read_only: bool,
    /// Called after each request is answered ([`FakeSabakan::after_each`]).
    pub reactors: Vec<Reactor>,
}

/// Sabakan's other users, acting between two requests of the client under test: called with
/// the request just answered, and the machines to change.
pub type Reactor = Arc<dyn Fn(&RecordedRequest, &mut BTreeMap<String, Machine>) + Send + Sync>;

impl World {
    pub fn now(&self) -> Timestamp {
        self.clock.unwrap_or_else(Timestamp::now)
    }
}

pub(crate) type Shared = Arc<Mutex<World>>;

/// A running fake sabakan and the test's handle on it. Dropping it stops the server.
pub struct FakeSabakan {
    server: Server,
    shared: Shared,
}

impl FakeSabakan {
    /// Binds 127.0.0.1:0 and serves plain HTTP (as sabakan serves its API), with no machines
    /// and the real clock.
    pub fn start() -> FakeSabakan {
        let shared: Shared = Arc::new(Mutex::new(World {
            machines: BTreeMap::new(),
            clock: None,
            requests: Vec::new(),
            faults: Faults::default(),
            read_only: false,
            reactors: Vec::new(),
        }));
        let options = Options {
            name: "fake-sabakan",
            tls: None,
            one_request_per_connection: false,
        };
        let s = shared.clone();
        let server = Server::start(options, move |_| move |req| server::handle(s.clone(), req));
        FakeSabakan { server, shared }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        self.server.url()
    }

    fn world(&self) -> MutexGuard<'_, World> {
        self.shared.lock().expect("fake-sabakan lock")
    }

    /// Adds (or replaces) a machine. An unset index in rack becomes the next free one in its
    /// rack (from 1), unset addresses become `10.<rack/256>.<rack%256>.<index>`, an unset
    /// state timestamp the fake's current time.
    pub fn insert(&self, mut m: Machine) {
        let mut w = self.world();
        if m.index_in_rack.is_none() {
            let used = w
                .machines
                .values()
                .filter(|o| o.rack == m.rack && o.serial != m.serial)
                .filter_map(|o| o.index_in_rack)
                .max()
                .unwrap_or(0);
            m.index_in_rack = Some(used + 1);
        }
        if m.ipv4.is_none() {
            let i = m.index_in_rack.unwrap_or_default();
            m.ipv4 = Some(vec![format!(
                "10.{}.{}.{}",
                (m.rack >> 8) & 255,
                m.rack & 255,
                i & 255
            )]);
        }
        if m.timestamp.is_none() {
            m.timestamp = Some(w.now());
        }
        w.machines.insert(m.serial.clone(), m);
    }

    /// Inserts the machines of a sabakan answer: a GraphQL `searchMachines` result
    /// (`{"data":{"searchMachines":[…]}}`) or a REST list (`GET /api/v1/machines`), so a
    /// fixture file can seed the fake. A machine without `status.timestamp` entered its state
    /// `status.duration` seconds before the fake's clock. Panics on what is not such an answer.
    pub fn load(&self, answer: &Value) {
        let list = answer
            .pointer("/data/searchMachines")
            .or(Some(answer))
            .and_then(Value::as_array)
            .unwrap_or_else(|| panic!("fake sabakan: not a machine list or GraphQL answer"));
        let now = self.world().now();
        for m in list {
            self.insert(Machine::from_json(m, now));
        }
    }

    /// A copy of a machine as stored.
    pub fn machine(&self, serial: &str) -> Option<Machine> {
        self.world().machines.get(serial).cloned()
    }

    /// Every machine, in serial order.
    pub fn machines(&self) -> Vec<Machine> {
        self.world().machines.values().cloned().collect()
    }

    /// A machine's labels. Panics if there is no such machine.
    pub fn labels(&self, serial: &str) -> BTreeMap<String, String> {
        self.world()
            .machines
            .get(serial)
            .unwrap_or_else(|| panic!("fake sabakan: no machine {serial}"))
            .labels
            .clone()
    }

    /// Changes a machine "behind the client's back", as sabakan's other users would (no
    /// rule is checked). Panics if there is no such machine.
    pub fn mutate(&self, serial: &str, f: impl FnOnce(&mut Machine)) {
        let mut w = self.world();
        let m = w
            .machines
            .get_mut(serial)
            .unwrap_or_else(|| panic!("fake sabakan: no machine {serial}"));
        f(m);
    }

    /// Moves a machine to a state with sabakan's transition rules, as a health checker would.
    pub fn set_state(&self, serial: &str, to: State) -> Result<(), StateError> {
        let mut w = self.world();
        let now = w.now();
        w.machines
            .get_mut(serial)
            .unwrap_or_else(|| panic!("fake sabakan: no machine {serial}"))
            .set_state(to, now)
    }

    /// Removes a machine at once, whatever its state.
    pub fn remove(&self, serial: &str) -> Option<Machine> {
        self.world().machines.remove(serial)
    }

    /// Freezes the fake's clock at `now` (RFC 3339): durations and days before retirement
    /// are computed from it, and state changes are stamped with it.
    pub fn set_now(&self, now: &str) {
        self.world().clock = Some(
            now.parse()
                .unwrap_or_else(|e| panic!("{now:?} is not an RFC 3339 instant: {e}")),
        );
    }

    /// Moves a frozen clock (or the real time, freezing it) forward.
    pub fn advance(&self, d: std::time::Duration) {
        let mut w = self.world();
        let now = w.now();
        let span = jiff::SignedDuration::try_from(d).expect("a duration in range");
        w.clock = Some(now.checked_add(span).expect("a time in range"));
    }

    /// Refuses every write with 403, as sabakan does for a client outside its allowed
    /// networks.
    pub fn read_only(&self, yes: bool) {
        self.world().read_only = yes;
    }

    /// After each request is answered, `f` may change the machines, as another user of
    /// sabakan would between two requests of the client under test (an operator's suspend
    /// while a pass runs). The answer already sent is not changed; the next request sees it.
    pub fn after_each(
        &self,
        f: impl Fn(&RecordedRequest, &mut BTreeMap<String, Machine>) + Send + Sync + 'static,
    ) {
        self.world().reactors.push(Arc::new(f));
    }

    /// Injects a fault. Faults are tried in the order added; a request uses up at most one.
    pub fn fault(&self, f: Fault) {
        let n = f.times;
        self.world().faults.push(f, n);
    }

    /// How many injected faults still wait for a request.
    pub fn pending_faults(&self) -> usize {
        self.world().faults.pending()
    }

    /// Every request so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.world().requests.clone()
    }

    /// The requests that change something: REST PUT/POST/DELETE and GraphQL mutations.
    pub fn writes(&self) -> Vec<RecordedRequest> {
        self.world()
            .requests
            .iter()
            .filter(|r| match r.method.as_str() {
                "GET" | "HEAD" => false,
                _ if r.path == "/graphql" => r.body.contains("mutation"),
                _ => true,
            })
            .cloned()
            .collect()
    }

    pub fn clear_requests(&self) {
        self.world().requests.clear();
    }
}
