//! What `run --loop` adds on a live Kubernetes cluster: watches that start the next pass soon
//! after a relevant change (with a full resync pass at least every --interval), leader election
//! between replicas, and a clean stop on SIGTERM or SIGINT (the Lease is given up).
//! The Ganeti and file backends keep the plain sleep between passes.

use super::LOG_TARGET;
use super::settings::{Leader, Run};
use crate::engine::{Backend, BackendError, Family, Intercepted, Interceptor, Write, WriteGuard};
use crate::k8s::lease::{Elector, Term, Timing};
use crate::k8s::watch::Watcher;
use crate::plug::Error;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A burst of changes (a person's `kubectl annotate` on ten Machines, the operator updating a
/// host twice) makes one pass: it starts once no change came for this long…
const QUIET: Duration = Duration::from_millis(200);
/// …or this long after the first change, whichever comes first; so a pass starts within about
/// a second of a change however busy the cluster is.
const MOST: Duration = Duration::from_secs(1);
/// How often a waiting loop looks at the stop flag and the election.
const SLICE: Duration = Duration::from_millis(250);

/// When the last pass planned said a time threshold falls due (see [`falls_due`]).
static DUE: std::sync::Mutex<Option<Instant>> = std::sync::Mutex::new(None);

/// Records that a threshold falls due `in_secs` seconds from now (as the family computed it
/// from the snapshot just read), so that the loop wakes then rather than at its resync.
pub fn falls_due(in_secs: Option<i64>) {
    // The time comes from marks anyone may write: one past what the clock holds wakes no one
    // (the resync still comes), rather than panic.
    let at = in_secs
        .and_then(|s| Instant::now().checked_add(Duration::from_secs(s.max(0).unsigned_abs())));
    *DUE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = at;
}

fn due() -> Option<Instant> {
    *DUE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub struct Daemon {
    watcher: Option<Watcher>,
    elector: Option<Elector>,
    stop: Arc<AtomicBool>,
    /// Whether the elector held the Lease the last time the loop looked.
    was_leader: bool,
}

/// Why the loop goes on.
pub enum Next {
    Pass,
    Stop,
}

impl Daemon {
    /// For `run --loop` on a live cluster: the watches, the election, the signal handler.
    /// `None` for one-off passes and the other backends.
    pub fn start(run: &Run) -> Result<Option<Daemon>, Error> {
        let Some(live) = &run.live else {
            return Ok(None);
        };
        if run.every.is_none() {
            return Ok(None);
        }
        let watcher = match &live.discover {
            Some(discover) => Some(
                Watcher::connect(&live.from, live.timeout, discover())
                    .map_err(|e| Error::Connect(e.into()))?,
            ),
            None => None,
        };
        let elector = match &run.leader {
            Some(Leader { lease, identity }) => Some(
                Elector::connect(
                    &live.from,
                    live.timeout,
                    lease.clone(),
                    identity.clone(),
                    Timing::default(),
                )
                .map_err(|e| Error::Connect(e.into()))?,
            ),
            None => None,
        };
        Ok(Some(Daemon {
            watcher,
            elector,
            // SIGTERM is what Kubernetes sends a Pod it stops: the loop stops at its next safe
            // point, and a second signal ends the process at once.
            stop: crate::child::catch_stop(true),
            was_leader: false,
        }))
    }

    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Before a pass: `false` if this replica does not hold the Lease (it then waits, up to
    /// `SLICE`, to get it). Standing by, it takes no notice of the changes the watches report
    /// (it acts on none, and they would pile up); its first pass once leader reads everything
    /// at once, a full resync, whatever the watches said meanwhile.
    pub fn may_act(&mut self) -> bool {
        let Some(e) = &self.elector else { return true };
        let leader = e.wait_leader(if self.was_leader {
            Duration::ZERO
        } else {
            SLICE
        });
        if !leader && let Some(w) = &self.watcher {
            w.forget();
        }
        if self.was_leader && !leader {
            tracing::warn!(target: LOG_TARGET, lease = %e.lease(), holder = e.holder().unwrap_or_default(), "this replica lost the lease: it stands by");
        }
        if leader && !self.was_leader {
            tracing::info!(target: LOG_TARGET, lease = %e.lease(), "this replica holds the lease: a full pass now");
        }
        self.was_leader = leader;
        leader
    }

    /// Called as a pass starts: the changes seen so far are in what it reads.
    pub fn pass_starts(&self) {
        if let Some(w) = &self.watcher {
            w.forget();
        }
    }

    /// What a pass starting now asks before each write (see [`write_guard`]).
    pub fn guard(&self) -> WriteGuard {
        write_guard(
            self.stop.clone(),
            self.elector.as_ref().map(Elector::this_term),
        )
    }

    /// Between passes: until a relevant change settled, `interval` after `last` (the resync),
    /// the Lease lost, or a stop signal.
    pub fn pause(&mut self, interval: Duration, last: Instant) -> Next {
        // None: past what the clock holds (the flag's parser bounds it well below), no resync.
        let resync = last.checked_add(interval);
        // A threshold falling due before the resync (a Node NotReady long enough, a timeout)
        // wakes the loop then: no event announces the passing of time.
        let wake = due().filter(|at| resync.is_none_or(|r| *at < r));
        loop {
            if self.stopping() {
                return Next::Stop;
            }
            if self.elector.as_ref().is_some_and(|e| !e.is_leader()) {
                return Next::Pass;
            }
            let now = Instant::now();
            if resync.is_some_and(|r| now >= r) {
                tracing::info!(target: LOG_TARGET, "resync: {} since the last pass started", humantime::format_duration(interval));
                return Next::Pass;
            }
            if wake.is_some_and(|at| now >= at) {
                tracing::info!(target: LOG_TARGET, "a time threshold falls due: next pass");
                return Next::Pass;
            }
            let left = match (wake, resync) {
                (Some(w), Some(r)) => Some(w.min(r)),
                (w, r) => w.or(r),
            }
            .map_or(SLICE, |until| {
                until.saturating_duration_since(now).min(SLICE)
            });
            let Some(w) = &self.watcher else {
                std::thread::sleep(left);
                continue;
            };
            let seen = w.settle(now + left, QUIET, MOST);
            if let Some(first) = seen.first() {
                tracing::info!(target: LOG_TARGET, changes = seen.len(), first = %first, "watch: {} change(s) seen, the first: {first}; next pass", seen.len());
                return Next::Pass;
            }
        }
    }
}

/// What a pass on the loop asks before each write: no stop signal raised, and (with leader
/// election) this replica still leading in the term the pass began in, long enough for the
/// write to be answered; the write's requests are then bounded by that term's deadline, which
/// the guard answers with (crate::fence). A signal lets the write under way finish and stops the pass before the
/// next; the executor records each write whole, so nothing is left half-recorded.
fn write_guard(stop: Arc<AtomicBool>, term: Option<Term>) -> WriteGuard {
    Arc::new(move || {
        if stop.load(Ordering::SeqCst) {
            return Err(BackendError::Halted(
                "stop signal: the write under way was finished, nothing more is written".into(),
            ));
        }
        match &term {
            Some(term) => term.deadline().map(Some),
            None => Ok(None),
        }
    })
}

/// Asks a [`WriteGuard`] before every write of the backend it wraps; the guard is handed on
/// to the backend too, for the calls that make several writes (a drain's evictions).
pub struct Guarded {
    guard: WriteGuard,
}

impl Guarded {
    pub fn new<F: Family, B: Backend<F>>(mut inner: B, guard: WriteGuard) -> Intercepted<B, Self> {
        inner.guard_writes(guard.clone());
        Intercepted::wrap(inner, Guarded { guard })
    }
}

impl<F: Family> Interceptor<F> for Guarded {
    fn before(&mut self, _: &Write<'_, F>) -> Result<(), BackendError> {
        (self.guard)().map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{ObjectRef, exec};
    use crate::k8s::lease::LeaseName;
    use crate::metal3::file::ObjectsFile;
    use crate::metal3::fixture::{Fleet, Host, Machine, Node};
    use crate::metal3::kube::{KubeBackend, Options};
    use crate::metal3::{Metal3, Settings};
    use testsupport::kube::{FakeKube, Fault, LEASE, MACHINE};

    fn one_machine() -> Fleet {
        Fleet::new()
            .machine(Machine::new("ns", "m1").node("n1").host("h1").requested())
            .host(Host::new("ns", "h1"))
            .node(Node::new("n1"))
    }

    #[test]
    fn a_replica_standing_by_takes_no_notice_of_the_changes_it_does_not_act_on() {
        let kube = FakeKube::builder().resource(LEASE).start();
        for item in one_machine().build()["items"].as_array().unwrap() {
            kube.insert(item.clone());
        }
        let timing = Timing {
            lease: Duration::from_secs(30),
            renew_deadline: Duration::from_secs(20),
            retry: Duration::from_millis(200),
        };
        let elector = |who: &str| {
            let lease = LeaseName {
                namespace: "ns".into(),
                name: "autorepair".into(),
            };
            Elector::from_config(
                kube.config(),
                Options::default().timeout,
                lease,
                who.into(),
                timing,
            )
            .unwrap()
        };
        let leader = elector("a");
        assert!(leader.wait_leader(Duration::from_secs(5)));
        let watcher =
            crate::metal3::kube::watch::from_config(kube.config(), &Options::default()).unwrap();
        assert!(watcher.wait_watching(Duration::from_secs(10)));
        let mut standby = Daemon {
            watcher: Some(watcher),
            elector: Some(elector("b")),
            stop: Arc::new(AtomicBool::new(false)),
            was_leader: false,
        };
        for i in 0..20 {
            kube.mutate(&MACHINE, "ns", "m1", |m| {
                m["metadata"]["annotations"]["autorepair.io/policy"] =
                    serde_json::json!(format!("power-cycle-{i}"));
            });
        }
        // The changes reach the watcher…
        std::thread::sleep(Duration::from_millis(500));
        // …and the replica standing by drops them, every time it looks.
        for _ in 0..3 {
            assert!(!standby.may_act());
        }
        let w = standby.watcher.as_ref().unwrap();
        assert_eq!(
            w.forget(),
            0,
            "changes left waiting for a replica that never acts"
        );
    }

    /// One seam a leader's writes go through: the write itself as the pass makes it (guard
    /// first), the server's delay of it, and how many writes the server has received.
    type GuardedWrite = Box<dyn FnMut(&WriteGuard) -> Result<(), BackendError>>;

    struct Seam {
        name: &'static str,
        write: GuardedWrite,
        /// The same write straight through the seam's client, no guard asked.
        raw: Box<dyn FnMut() -> Result<(), RawRefusal>>,
        /// Where that client reads the deadline of the write it sends.
        lead: crate::fence::Lead,
        received: Box<dyn Fn() -> usize>,
    }

    /// Why a seam's client refused its unguarded write: the fence's own refusal, or anything
    /// else (its message, for the assertion's).
    #[derive(Debug, thiserror::Error)]
    enum RawRefusal {
        #[error(transparent)]
        NotSent(crate::fence::TooLate),
        #[error("{0}")]
        Other(String),
    }

    fn kube_seam(kube: &Arc<FakeKube>) -> Seam {
        let mut backend = KubeBackend::from_config(kube.config(), Options::default()).unwrap();
        backend.snapshot().unwrap();
        kube.fault(
            Fault::delay(Duration::from_secs(20))
                .on_object(&MACHINE, "ns", "m1")
                .method("PATCH"),
        );
        let rt = crate::k8s::client::runtime().unwrap();
        let lead = crate::fence::Lead::default();
        let client = {
            let _in = rt.enter();
            crate::k8s::client::build(kube.config(), Duration::from_secs(30), &lead)
                .unwrap()
                .0
        };
        let writes = kube.clone();
        let sent = kube.clone();
        Seam {
            name: "kube",
            write: Box::new(move |guard| {
                let mut guarded = Guarded::new(&mut backend, guard.clone());
                let machine = ObjectRef::new("machine", "ns/m1");
                guarded.add_marks(&machine, &["autorepair.io/policy=reboot".into()], "t")
            }),
            raw: Box::new(move || {
                // Where the pass's write went.
                let path = sent
                    .writes()
                    .into_iter()
                    .find(|w| w.path.contains("/machines/"))
                    .expect("the pass's write")
                    .path;
                let req = http::Request::patch(path)
                    .header("Content-Type", "application/merge-patch+json")
                    .body(b"{}".to_vec())
                    .unwrap();
                rt.block_on(client.request_text(req))
                    .map(drop)
                    .map_err(|e| {
                        // kube's error holds the fence's as a cause.
                        let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&e);
                        while let Some(c) = cause {
                            if let Some(crate::k8s::client::FenceError::NotSent(late)) =
                                c.downcast_ref()
                            {
                                return RawRefusal::NotSent(*late);
                            }
                            cause = c.source();
                        }
                        RawRefusal::Other(e.to_string())
                    })
            }),
            received: Box::new(move || {
                let w = writes.writes();
                w.iter().filter(|w| w.path.contains("/machines/")).count()
            }),
            lead,
        }
    }

    fn sabakan_seam() -> Seam {
        let sabakan = testsupport::sabakan::FakeSabakan::start();
        sabakan.insert(testsupport::sabakan::machine("cs0"));
        sabakan.fault(testsupport::sabakan::Fault::delay(Duration::from_secs(20)).method("PUT"));
        let endpoint = crate::sabakan::client::Endpoint::new(sabakan.url());
        let live = crate::machines::live::SabakanLive::connect(&endpoint).unwrap();
        let client = crate::sabakan::client::Sabakan::new(&endpoint).unwrap();
        let lead = client.lead().clone();
        let sabakan = std::sync::Arc::new(sabakan);
        let writes = sabakan.clone();
        Seam {
            name: "sabakan",
            // As the machines backend writes a label: the guard, keeping its deadline for the
            // client, then the request.
            write: Box::new(move |guard| {
                crate::fence::leading(guard.clone(), live.lead())()?;
                live.put("cs0", "autorepair.progress", "x")
            }),
            raw: Box::new(move || {
                client
                    .put_label("cs0", "autorepair.progress", "y")
                    .map_err(|e| match e {
                        crate::sabakan::client::ClientError::Fenced { fenced, .. } => {
                            RawRefusal::NotSent(fenced)
                        }
                        e => RawRefusal::Other(e.to_string()),
                    })
            }),
            received: Box::new(move || writes.writes().len()),
            lead,
        }
    }

    /// The leader is cut off from its Lease right after it won it, and its write hangs on the
    /// server: the write is given up by the leader's deadline rather than answered whenever
    /// the server pleases (20 s later), and once too little time is left nothing more is sent,
    /// guard asked or not.
    #[test]
    fn a_leaders_write_is_bounded_by_the_time_it_still_leads() {
        type MakeSeam = fn(&Arc<FakeKube>) -> Seam;
        let seams: [MakeSeam; 2] = [kube_seam, |_| sabakan_seam()];
        for make in seams {
            let kube = Arc::new(FakeKube::builder().resource(LEASE).start());
            for item in one_machine().build()["items"].as_array().unwrap() {
                kube.insert(item.clone());
            }
            let timing = Timing {
                lease: Duration::from_secs(4),
                renew_deadline: Duration::from_secs(3),
                retry: Duration::from_millis(200),
            };
            let lease = LeaseName {
                namespace: "ns".into(),
                name: "autorepair".into(),
            };
            let elector = Elector::from_config(
                kube.config(),
                Duration::from_secs(5),
                lease,
                "a".into(),
                timing,
            )
            .unwrap();
            assert!(elector.wait_leader(Duration::from_secs(5)));
            let mut seam = make(&kube);
            // Partitioned from the coordination: every Lease request fails from now on.
            kube.fault(
                Fault::status(500)
                    .on_object(&LEASE, "ns", "autorepair")
                    .times(usize::MAX),
            );
            let term = elector.this_term();
            let guard = write_guard(Arc::new(AtomicBool::new(false)), Some(term.clone()));
            let until = term.deadline().unwrap();
            let e = (seam.write)(&guard).expect_err(seam.name).to_string();
            let now = Instant::now();
            assert!(
                now + crate::fence::MARGIN <= until + Duration::from_millis(100),
                "{}: the write was waited for until {:?} after the deadline: {e}",
                seam.name,
                now.checked_duration_since(until)
            );
            assert!(
                e.contains("timed out") || e.contains("abandoned"),
                "{}: {e}",
                seam.name
            );
            assert_eq!(
                (seam.received)(),
                1,
                "{}: the write reached the server",
                seam.name
            );
            // Too little time left: neither the guard nor the seam's client sends anything.
            std::thread::sleep(
                until.saturating_duration_since(Instant::now()) - crate::fence::MARGIN / 2,
            );
            let refused = (seam.write)(&guard).expect_err(seam.name);
            assert!(
                matches!(refused, BackendError::Halted(_)),
                "{}: {refused}",
                seam.name
            );
            // The client holding the deadline a guard gave, the guard not asked again.
            crate::fence::leading(Arc::new(move || Ok(Some(until))), &seam.lead)().unwrap();
            let raw = (seam.raw)().expect_err(seam.name);
            assert!(
                matches!(raw, RawRefusal::NotSent(late) if late.left < crate::fence::MARGIN),
                "{}: {raw}",
                seam.name
            );
            assert_eq!((seam.received)(), 1, "{}: a write sent too late", seam.name);
        }
    }

    /// Raises the stop flag once `after` writes went through.
    struct SignalAfter<B> {
        inner: B,
        after: usize,
        writes: usize,
        stop: Arc<AtomicBool>,
    }

    impl<B> SignalAfter<B> {
        fn wrote(&mut self) {
            self.writes += 1;
            if self.writes == self.after {
                self.stop.store(true, Ordering::SeqCst);
            }
        }
    }

    impl<B: Backend<Metal3>> Backend<Metal3> for SignalAfter<B> {
        fn snapshot(&mut self) -> Result<crate::metal3::objects::Snapshot, BackendError> {
            self.inner.snapshot()
        }
        fn add_marks(&mut self, o: &ObjectRef, t: &[String], r: &str) -> Result<(), BackendError> {
            self.inner.add_marks(o, t, r)?;
            self.wrote();
            Ok(())
        }
        fn remove_marks(
            &mut self,
            o: &ObjectRef,
            t: &[String],
            r: &str,
        ) -> Result<(), BackendError> {
            self.inner.remove_marks(o, t, r)?;
            self.wrote();
            Ok(())
        }
        fn submit(
            &mut self,
            t: &str,
            op: &crate::metal3::Op,
            r: &str,
            a: Option<&crate::metal3::OpId>,
        ) -> Result<crate::metal3::OpId, BackendError> {
            let id = self.inner.submit(t, op, r, a)?;
            self.wrote();
            Ok(id)
        }
    }

    #[test]
    fn a_stop_signal_stops_the_pass_after_the_write_under_way() {
        let stop = Arc::new(AtomicBool::new(false));
        let mut file = ObjectsFile::in_memory(one_machine().build());
        let snap = file.snapshot().unwrap();
        let plan = crate::metal3::plan(
            &snap,
            &Settings::default(),
            1_800_000_000,
            &crate::engine::Limits::default(),
            7,
        );
        // Starting the power cycle is several writes: the pending mark, the power-off, the
        // mark that records it.
        assert!(plan.actions().count() > 0);
        let signalled = SignalAfter {
            inner: &mut file,
            after: 1,
            writes: 0,
            stop: stop.clone(),
        };
        let mut guarded = Guarded::new(signalled, write_guard(stop, None));
        let report = exec::execute(&plan, &mut guarded);
        assert_eq!(guarded.inner.writes, 1, "nothing written after the signal");
        let why = report.halted.expect("the pass says it stopped");
        assert!(why.contains("stop signal"), "{why}");
        assert!(report.errors.is_empty(), "{:?}", report.errors);
    }
}
