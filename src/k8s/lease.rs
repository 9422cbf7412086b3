//! Leader election between replicas of `run --loop` with a `coordination.k8s.io/v1` Lease, as
//! client-go's leaderelection does it: the holder renews the Lease every few seconds; the others
//! take it over only once they have seen it unchanged for a whole lease duration (measured on
//! their own clock, so clocks need not agree); every write is conditioned (a create fails if
//! the Lease exists, an update carries the resourceVersion read), so two replicas racing for
//! it cannot both win.
//!
//! The holder counts itself leader only until `renew_deadline` after the start of its last
//! successful renewal, shorter than the lease duration the others wait: a holder cut off from
//! the API server stops acting before anyone else can start. On a clean stop it gives the
//! Lease up (holder emptied), so another replica takes over at once.

use crate::engine::BackendError;
use crate::k8s::Source;
use crate::k8s::client::{client_error, harden, load, runtime};
use ::kube::api::{Api, DynamicObject, PostParams};
use ::kube::core::ApiResource;
use ::kube::{Client, Config};
use serde_json::{Value, json};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The Lease, `NAMESPACE/NAME`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseName {
    pub namespace: String,
    pub name: String,
}

impl std::fmt::Display for LeaseName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// The default Lease name.
pub const DEFAULT_LEASE: &str = "autorepair";

/// How long things take. The defaults are client-go's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// How long the others wait, after they last saw the Lease change, before taking it.
    pub lease: Duration,
    /// How long the holder counts itself leader after a renewal started (less than `lease`).
    pub renew_deadline: Duration,
    /// How often the holder renews, and the others look.
    pub retry: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            lease: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry: Duration::from_secs(2),
        }
    }
}

fn lease_resource() -> ApiResource {
    ApiResource {
        group: "coordination.k8s.io".into(),
        version: "v1".into(),
        api_version: "coordination.k8s.io/v1".into(),
        kind: "Lease".into(),
        plural: "leases".into(),
    }
}

/// What the election knows, shared with the thread that runs it.
type Shared = Standing<Instant>;

/// A replica's standing in the election, on any clock: `Instant` here, the chaos simulator's
/// clock there (its replicas run this very code: docs/simulator.md). The thread that runs the
/// election records each round's outcome in it; a pass asks it before each write.
#[derive(Debug, Clone)]
pub struct Standing<T> {
    /// Leader until then.
    until: Option<T>,
    /// Who holds the Lease, as last read.
    holder: Option<String>,
    /// How many times this replica has become leader: a pass planned under one term must
    /// not write under the next (another replica may have acted in between).
    term: u64,
    /// Whether the last round left this replica leading.
    leading: bool,
}

impl<T> Default for Standing<T> {
    fn default() -> Self {
        Standing {
            until: None,
            holder: None,
            term: 0,
            leading: false,
        }
    }
}

impl<T: Copy + PartialOrd + std::ops::Add<Duration, Output = T>> Standing<T> {
    /// A round that started at `started` created, took over or renewed the Lease for `me`:
    /// leader until the renew deadline after that start (the others wait a whole lease
    /// duration after they saw the change, which is longer). Whether this begins a new term.
    pub fn renewed(&mut self, started: T, timing: &Timing, me: &str) -> bool {
        self.until = Some(started + timing.renew_deadline);
        self.holder = Some(me.to_owned());
        let anew = !self.leading;
        if anew {
            self.term += 1;
        }
        self.leading = true;
        anew
    }

    /// Another replica holds the Lease and it has not run out. Whether that is news.
    pub fn follows(&mut self, holder: &str) -> bool {
        self.until = None;
        let news = self.leading || self.holder.as_deref() != Some(holder);
        self.holder = Some(holder.to_owned());
        self.leading = false;
        news
    }

    /// A round at `now` could not read or write the Lease: still leader until the deadline of
    /// the last renewal that worked. Whether this replica stops leading now.
    pub fn unreachable(&mut self, now: T) -> bool {
        if self.leading && self.until.is_none_or(|t| now >= t) {
            self.leading = false;
            self.until = None;
            return true;
        }
        false
    }

    /// The replica stops (it gives the Lease up next): no write from now on.
    pub fn stop(&mut self) {
        self.until = None;
    }

    pub fn is_leader(&self, now: T) -> bool {
        self.until.is_some_and(|t| now < t)
    }

    pub fn term(&self) -> u64 {
        self.term
    }

    /// Who holds the Lease, as last read.
    pub fn holder(&self) -> Option<&str> {
        self.holder.as_deref()
    }

    /// The check before each write of a pass planned in `term`: still leader, in that term.
    pub fn may_write(&self, term: u64, now: T) -> bool {
        self.term == term && self.is_leader(now)
    }

    /// [`Self::may_write`], refused with a [`BackendError::Halted`] saying who holds the Lease.
    pub fn check(
        &self,
        term: u64,
        now: T,
        identity: &str,
        lease: &impl std::fmt::Display,
    ) -> Result<(), BackendError> {
        if self.may_write(term, now) {
            return Ok(());
        }
        Err(BackendError::Halted(format!(
            "not written: this replica ({identity}) no longer holds the lease {lease} it planned this pass under (held by {}); the leader's passes take over",
            self.holder().unwrap_or("nobody known")
        )))
    }
}

/// Whether `me` may write the Lease it read (to take it over, or renew it): it is its own, or
/// nobody's, or it has been seen unchanged for `unchanged`, a whole lease `duration` (measured
/// on the reader's clock from when it saw the last change: clocks need not agree).
pub fn may_take(holder: &str, me: &str, unchanged: Duration, duration: Duration) -> bool {
    holder == me || holder.is_empty() || unchanged >= duration
}

/// The Lease as last read, and when it was first seen so, on any clock (see [`Standing`]).
#[derive(Debug, Clone)]
pub struct Observed<T> {
    pub holder: String,
    pub renew: String,
    pub at: T,
}

impl<T: Copy> Observed<T> {
    /// Notes the Lease as read at `now`: a change of holder or renewal time restarts the wait.
    pub fn see(seen: &mut Option<Observed<T>>, holder: &str, renew: &str, now: T) -> T {
        match seen {
            Some(o) if o.holder == holder && o.renew == renew => o.at,
            _ => {
                *seen = Some(Observed {
                    holder: holder.to_owned(),
                    renew: renew.to_owned(),
                    at: now,
                });
                now
            }
        }
    }
}

/// One replica's side of the election, run on a thread of its own until dropped (which gives
/// the Lease up if held).
pub struct Elector {
    lease: LeaseName,
    identity: String,
    shared: Arc<(Mutex<Shared>, Condvar)>,
    stop: Option<tokio::sync::watch::Sender<bool>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Elector {
    /// Elects through the cluster `source` names; `timeout` is how long one request may take.
    pub fn connect(
        source: &Source,
        timeout: Duration,
        lease: LeaseName,
        identity: String,
        timing: Timing,
    ) -> Result<Elector, BackendError> {
        let rt = runtime()?;
        let config = rt.block_on(load(source))?;
        Self::start(rt, config, timeout, lease, identity, timing)
    }

    /// Elects through the server of a client configuration (tests).
    pub fn from_config(
        config: Config,
        timeout: Duration,
        lease: LeaseName,
        identity: String,
        timing: Timing,
    ) -> Result<Elector, BackendError> {
        Self::start(runtime()?, config, timeout, lease, identity, timing)
    }

    fn start(
        rt: tokio::runtime::Runtime,
        mut config: Config,
        timeout: Duration,
        lease: LeaseName,
        identity: String,
        timing: Timing,
    ) -> Result<Elector, BackendError> {
        if timing.renew_deadline >= timing.lease {
            return Err(BackendError::Api(format!(
                "leader election: the renew deadline ({:?}) must be shorter than the lease ({:?})",
                timing.renew_deadline, timing.lease
            )));
        }
        harden(&mut config, timeout)?;
        // A renewal that takes longer than the deadline is useless: give up on it then.
        config.read_timeout = Some(timing.renew_deadline);
        config.write_timeout = Some(timing.renew_deadline);
        let server = config.cluster_url.to_string();
        let client = {
            let _entered = rt.enter();
            Client::try_from(config).map_err(|e| client_error(&server, e))?
        };
        let shared = Arc::new((Mutex::new(Shared::default()), Condvar::new()));
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let mut campaign = Campaign {
            api: Api::namespaced_with(client, &lease.namespace, &lease_resource()),
            lease: lease.clone(),
            identity: identity.clone(),
            timing,
            observed: None,
        };
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("leader-election".into())
            .spawn(move || rt.block_on(campaign.run(s, stopped)))
            .map_err(|e| {
                BackendError::Api(format!("cannot start the leader election thread: {e}"))
            })?;
        Ok(Elector {
            lease,
            identity,
            shared,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The current leadership term (see [`Self::is_leader`]); it changes each time this
    /// replica becomes leader anew.
    pub fn term(&self) -> u64 {
        self.shared
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .term()
    }

    /// The leadership term now, to check before each write of a pass planned in it.
    pub fn this_term(&self) -> Term {
        Term {
            shared: self.shared.clone(),
            term: self.term(),
            lease: self.lease.clone(),
            identity: self.identity.clone(),
        }
    }

    /// Whether this replica holds the Lease now (and may write).
    pub fn is_leader(&self) -> bool {
        let s = self.shared.0.lock().unwrap_or_else(|p| p.into_inner());
        s.is_leader(Instant::now())
    }

    /// Waits up to `timeout` to be leader; whether it is.
    pub fn wait_leader(&self, timeout: Duration) -> bool {
        let until = Instant::now() + timeout;
        let (lock, cv) = &*self.shared;
        let mut s = lock.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let now = Instant::now();
            if s.is_leader(now) {
                return true;
            }
            if now >= until {
                return false;
            }
            s = cv
                .wait_timeout(s, until - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Who holds the Lease, as last read.
    pub fn holder(&self) -> Option<String> {
        let s = self.shared.0.lock().unwrap_or_else(|p| p.into_inner());
        s.holder().map(str::to_owned)
    }

    pub fn lease(&self) -> &LeaseName {
        &self.lease
    }

    pub fn identity(&self) -> &str {
        &self.identity
    }
}

impl Drop for Elector {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(true);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One leadership term of this replica, as a pass planned in it saw it: a handle the pass
/// checks before each write, so that a replica that lost the Lease mid-pass (even if it won it
/// back since: another replica may have acted in between) writes nothing more of its plan.
#[derive(Clone)]
pub struct Term {
    shared: Arc<(Mutex<Shared>, Condvar)>,
    term: u64,
    lease: LeaseName,
    identity: String,
}

impl Term {
    /// `Ok` while this replica may still write in this term (see [`Self::deadline`]).
    pub fn check(&self) -> Result<(), BackendError> {
        self.deadline().map(drop)
    }

    /// Until when this replica still leads in this term, if it may write now: a
    /// [`BackendError::Halted`] saying who holds the Lease when it does not, or when so little
    /// of the term is left that a request could not be answered in it (crate::fence).
    pub fn deadline(&self) -> Result<Instant, BackendError> {
        let s = self.shared.0.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        // The check the simulator's replicas make too (Standing::check), then the time left.
        s.check(self.term, now, &self.identity, &self.lease)?;
        let until = s
            .until
            .expect("a replica that may write leads until a deadline");
        crate::fence::budget(Duration::MAX, now, Some(until))
            .map(|_| until)
            .map_err(|late| {
                BackendError::Halted(format!(
                    "not written: this replica ({}) holds the lease {} for {:?} more, too little for a write to land before its renew deadline; it writes again once the lease is renewed",
                    self.identity, self.lease, late.left
                ))
            })
    }
}

struct Campaign {
    api: Api<DynamicObject>,
    lease: LeaseName,
    identity: String,
    timing: Timing,
    observed: Option<Observed<Instant>>,
}

/// A MicroTime as the API server writes it: RFC 3339, UTC, six fraction digits.
fn micro_time(t: jiff::Timestamp) -> String {
    format!(
        "{}.{:06}Z",
        t.strftime("%Y-%m-%dT%H:%M:%S"),
        t.subsec_microsecond()
    )
}

enum Outcome {
    Leader,
    /// Held by someone else (named) whose lease has not run out.
    Follower(String),
}

impl Campaign {
    async fn run(
        &mut self,
        shared: Arc<(Mutex<Shared>, Condvar)>,
        mut stopped: tokio::sync::watch::Receiver<bool>,
    ) {
        loop {
            let started = Instant::now();
            let outcome = self.try_acquire_or_renew().await;
            let (lock, cv) = &*shared;
            {
                let mut s = lock.lock().unwrap_or_else(|p| p.into_inner());
                match &outcome {
                    Ok(Outcome::Leader) => {
                        if s.renewed(started, &self.timing, &self.identity) {
                            tracing::info!(lease = %self.lease, identity = %self.identity, "leader election: this replica holds the lease and acts");
                        }
                    }
                    Ok(Outcome::Follower(holder)) => {
                        if s.follows(holder) {
                            tracing::info!(lease = %self.lease, holder = %holder, "leader election: {holder} holds the lease; this replica stands by");
                        }
                    }
                    Err(e) => {
                        // Still leader until the deadline of the last renewal that worked.
                        tracing::warn!(lease = %self.lease, error = %e, "leader election: cannot read or write the lease; trying again in {:?}", self.timing.retry);
                        if s.unreachable(Instant::now()) {
                            tracing::warn!(lease = %self.lease, "leader election: the lease could not be renewed in time: this replica stops acting");
                        }
                    }
                }
            }
            cv.notify_all();
            tokio::select! {
                () = tokio::time::sleep(self.timing.retry) => {}
                _ = stopped.changed() => break,
            }
        }
        let leading = {
            let mut s = shared.0.lock().unwrap_or_else(|p| p.into_inner());
            let leading = s.leading;
            s.stop();
            leading
        };
        if leading {
            match self.release().await {
                Ok(()) => tracing::info!(lease = %self.lease, "leader election: lease given up"),
                Err(e) => {
                    tracing::warn!(lease = %self.lease, error = %e, "leader election: cannot give the lease up; the others take it when it runs out")
                }
            }
        }
    }

    fn spec(&self, now: jiff::Timestamp, acquired: Option<&str>, transitions: i64) -> Value {
        let now = micro_time(now);
        json!({
            "holderIdentity": self.identity,
            "leaseDurationSeconds": self.timing.lease.as_secs().max(1),
            "acquireTime": acquired.map_or_else(|| now.clone(), str::to_owned),
            "renewTime": now,
            "leaseTransitions": transitions,
        })
    }

    async fn try_acquire_or_renew(&mut self) -> Result<Outcome, ::kube::Error> {
        let now = jiff::Timestamp::now();
        let Some(current) = self.api.get_opt(&self.lease.name).await? else {
            let lease: DynamicObject = serde_json::from_value(json!({
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.lease.name, "namespace": self.lease.namespace},
                "spec": self.spec(now, None, 0),
            }))
            .map_err(::kube::Error::SerdeError)?;
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(_) => Ok(Outcome::Leader),
                // Someone created it first: theirs.
                Err(::kube::Error::Api(s)) if s.code == 409 => {
                    Ok(Outcome::Follower("another replica".into()))
                }
                Err(e) => Err(e),
            };
        };
        let spec = current.data.get("spec").cloned().unwrap_or_default();
        let field = |k: &str| {
            spec.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let holder = field("holderIdentity");
        let renew = field("renewTime");
        let transitions = spec
            .get("leaseTransitions")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let seen = Observed::see(&mut self.observed, &holder, &renew, Instant::now());
        let duration = spec
            .get("leaseDurationSeconds")
            .and_then(Value::as_u64)
            .map_or(self.timing.lease, Duration::from_secs);
        let ours = holder == self.identity;
        if !may_take(&holder, &self.identity, seen.elapsed(), duration) {
            return Ok(Outcome::Follower(holder));
        }
        let acquired = ours.then(|| field("acquireTime"));
        let transitions = if ours { transitions } else { transitions + 1 };
        // Conditioned on the resourceVersion just read: a renewal or takeover by someone else
        // since makes it a 409.
        let mut lease = current;
        lease.metadata.managed_fields = None;
        lease.data["spec"] = self.spec(
            now,
            acquired.as_deref().filter(|a| !a.is_empty()),
            transitions,
        );
        match self
            .api
            .replace(&self.lease.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => Ok(Outcome::Leader),
            // Renewed or taken by someone else since the read: not ours this time.
            Err(::kube::Error::Api(s)) if s.code == 409 => {
                Ok(Outcome::Follower(if holder.is_empty() {
                    "another replica".into()
                } else {
                    holder
                }))
            }
            Err(e) => Err(e),
        }
    }

    /// Empties the holder (conditioned on the Lease being as we last wrote it).
    async fn release(&mut self) -> Result<(), ::kube::Error> {
        let Some(mut lease) = self.api.get_opt(&self.lease.name).await? else {
            return Ok(());
        };
        if lease
            .data
            .pointer("/spec/holderIdentity")
            .and_then(Value::as_str)
            != Some(&self.identity)
        {
            return Ok(());
        }
        lease.metadata.managed_fields = None;
        lease.data["spec"]["holderIdentity"] = Value::Null;
        lease.data["spec"]["leaseDurationSeconds"] = json!(1);
        lease.data["spec"]["renewTime"] = json!(micro_time(jiff::Timestamp::now()));
        self.api
            .replace(&self.lease.name, &PostParams::default(), &lease)
            .await
            .map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micro_times_have_six_fraction_digits() {
        let t = jiff::Timestamp::from_microsecond(1_800_000_000_000_042).unwrap();
        assert_eq!(micro_time(t), "2027-01-15T08:00:00.000042Z");
    }
}
