//! Backends: the only code (with the executor) that talks to the world. Each family brings its
//! own; the executor drives any of them through [`Backend`].

use super::family::Family;
use super::object::ObjectRef;

/// Asked before each write a backend makes; an error (normally [`BackendError::Halted`])
/// stops the writing there. Whoever may have to stop a pass mid-way sets it (a replica that
/// lost its leader election, a stop signal): see [`Backend::guard_writes`]. A write it lets
/// go gets the instant its requests must be over by (`None`: no bound, the configured
/// timeouts), which the backend hands to the clients that send them: the bound travels with
/// the guard's answer, whatever thread then sends the requests.
pub type WriteGuard =
    std::sync::Arc<dyn Fn() -> Result<Option<std::time::Instant>, BackendError> + Send + Sync>;

#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("{object} does not exist")]
    NoSuchObject { object: ObjectRef },
    #[error("fleet file {path}: {message}")]
    FleetFile { path: String, message: String },
    /// A file the backend reads beside the fleet, named by what it is (`nodes file`).
    #[error("{what} {path}: {message}")]
    File {
        what: &'static str,
        path: String,
        message: String,
    },
    #[error("{0}")]
    Api(String),
    /// Only for the crash tests and the chaos simulator ([`Dying`]): the process was killed
    /// between two calls. The executor ends the pass there and reports no error, since a
    /// killed process reports nothing either; only those tests build it, so the product
    /// without the `testkit` feature has no such variant.
    #[cfg(any(test, feature = "testkit"))]
    #[error("crashed on purpose after {calls} backend calls")]
    Crashed { calls: usize },
    /// Nothing more may be written this pass (the leader election lost, a stop signal): the
    /// executor ends the pass here. The write asked for was not made; the ones before were.
    #[error("{0}")]
    Halted(String),
    /// The backend's credentials may read but not write: every other write of the pass would be
    /// refused the same way, so the executor ends the pass at the first, as one error. The
    /// write asked for was not made; the ones before were. The text says what to grant.
    #[error("{0}")]
    NoWriteAccess(String),
    /// The service the backend talks to failed: it could not be reached, or it answered with
    /// an error. The executor only reports it and goes on with the next target, so what it
    /// was stays the backend's own type (the code that retries a request or tells a conflict
    /// looks inside with `downcast_ref`); its message is the source's, word for word.
    #[error(transparent)]
    Service(Box<dyn std::error::Error + Send + Sync>),
}

impl BackendError {
    /// A typed failure of the service, kept as it is ([`BackendError::Service`]).
    pub fn service(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        BackendError::Service(Box::new(e))
    }

    /// The service's failure, if this is one of type `E`.
    pub fn service_error<E: std::error::Error + 'static>(&self) -> Option<&E> {
        match self {
            BackendError::Service(e) => e.downcast_ref(),
            _ => None,
        }
    }

    /// The service's failure, if this is one of type `E`, to add to what it says.
    pub fn service_error_mut<E: std::error::Error + 'static>(&mut self) -> Option<&mut E> {
        match self {
            BackendError::Service(e) => e.downcast_mut(),
            _ => None,
        }
    }
}

/// One fleet. Every method is one call to the world, so the executor's ordering is the
/// crash-safety argument: a pass may die between any two calls.
pub trait Backend<F: Family> {
    fn snapshot(&mut self) -> Result<F::Snapshot, BackendError>;
    fn add_marks(
        &mut self,
        object: &ObjectRef,
        marks: &[String],
        reason: &str,
    ) -> Result<(), BackendError>;
    fn remove_marks(
        &mut self,
        object: &ObjectRef,
        marks: &[String],
        reason: &str,
    ) -> Result<(), BackendError>;
    /// Submits one repair operation on a target, carrying `reason` (the repair id) and
    /// running only after `after` succeeded. Returns the operation's id.
    fn submit(
        &mut self,
        target: &str,
        op: &F::Op,
        reason: &str,
        after: Option<&F::OpId>,
    ) -> Result<F::OpId, BackendError>;
    /// Carries out work on an operation the watcher runs itself ([`Action::Advance`]).
    /// Families without such operations never plan it.
    ///
    /// [`Action::Advance`]: super::Action::Advance
    fn advance(
        &mut self,
        object: &ObjectRef,
        op: &F::Op,
        _reason: &str,
    ) -> Result<(), BackendError> {
        Err(BackendError::Api(format!(
            "{object}: this backend runs no operation itself, so it cannot do {op}"
        )))
    }
    /// Whether `op` can be chained after an operation submitted earlier in the same pass (run
    /// only once that one succeeded). When not, the executor stops the chain there and a later
    /// pass submits the rest.
    fn can_follow(&self, _op: &F::Op) -> bool {
        true
    }
    /// Whether the backend can run this kind of operation at all.
    fn supports(&self, _step: F::Step) -> bool {
        true
    }
    /// Called once after a real (not dry) pass acted.
    fn finish_pass(&mut self, _now: i64) -> Result<(), BackendError> {
        self.flush()
    }
    /// Makes the writes so far durable, for backends that buffer them.
    fn flush(&mut self) -> Result<(), BackendError> {
        Ok(())
    }
    /// Waits at most `limit` until the writes made so far show in a new read of the fleet, for
    /// a person who acts on them next (`suspend X; resume X`). Stores that apply a write before
    /// they answer it have nothing to wait for; some stores queue a write as a job. An error
    /// is a write the fleet took and then failed to apply.
    fn wait_applied(&mut self, _limit: std::time::Duration) -> Result<Applied, BackendError> {
        Ok(Applied::Yes)
    }
    /// Has the backend ask `guard` before every write it makes from now on, inside one call
    /// too: one call may make many writes (a drain evicts every Pod of a Node), and a pass
    /// must stop between two of them, not only between two calls. Backends whose calls make
    /// one write each may ignore it: the caller asks the guard before each call.
    fn guard_writes(&mut self, _guard: WriteGuard) {}
    /// After an operator braked the pass (a suspend while it ran): cancels the operations this
    /// pass submitted that have not started yet, on the targets `covered` accepts, and
    /// withdraws the marks that recorded them, so that the next pass counts no failure (the
    /// repair did not fail: it was called off). Returns each canceled operation with its
    /// target. Backends whose operations cannot wait behind others cancel nothing.
    fn cancel_unstarted(
        &mut self,
        _covered: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<(String, F::OpId)>, BackendError> {
        Ok(Vec::new())
    }
    /// The writes to the store this backend made since it was opened, for a backend whose one
    /// call can make several (an operation recorded as an entry, its progress and a counter),
    /// so that a pass's summary counts every write, not only the marks. `None`: one write per
    /// mark, as the executor counts them.
    fn writes_made(&self) -> Option<usize> {
        None
    }
    /// The object whose suspend the backend saw appear in the fleet while this pass ran
    /// (given from another host, say), for a backend that watches for one before its writes
    /// and while it waits: the pass then stops as the operator's brake stops it.
    fn suspended_meanwhile(&self) -> Option<String> {
        None
    }
}

/// Whether the writes made so far show in a new read ([`Backend::wait_applied`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Applied {
    Yes,
    /// Still waiting in the fleet's own queue when the time ran out: what waits, for a person
    /// (`job 4711 (queued)`).
    NotYet(String),
}

/// One write a backend is asked to make, as an [`Interceptor`] sees it.
pub enum Write<'a, F: Family> {
    AddMarks {
        object: &'a ObjectRef,
        marks: &'a [String],
        reason: &'a str,
    },
    RemoveMarks {
        object: &'a ObjectRef,
        marks: &'a [String],
        reason: &'a str,
    },
    Submit {
        target: &'a str,
        op: &'a F::Op,
        reason: &'a str,
        after: Option<&'a F::OpId>,
    },
    /// Work on an operation the watcher runs itself (commands, power changes).
    Advance {
        object: &'a ObjectRef,
        op: &'a F::Op,
        reason: &'a str,
    },
}

/// Sees every write an [`Intercepted`] backend is asked to make. Whatever must happen around
/// writes (a crash budget, a leader-election guard, a log of calls, an operator's brake) is one
/// of these, so that no wrapper writes the forwarding of [`Backend`]'s methods again and none
/// can forget one.
pub trait Interceptor<F: Family> {
    /// Asked before the write. An error refuses it: the write is not made and the call
    /// returns that error (the executor ends the pass on [`BackendError::Halted`]).
    fn before(&mut self, _write: &Write<'_, F>) -> Result<(), BackendError> {
        Ok(())
    }
    /// Told once the write was made; `id` is the operation's id for a [`Write::Submit`].
    fn after(&mut self, _write: &Write<'_, F>, _id: Option<&F::OpId>) {}
}

/// Lets every write through.
impl<F: Family> Interceptor<F> for () {}

/// What a wrapper that must see the backend it wraps does around its calls: a simulated world
/// that sets up, from the fleet, what a write is about, reads the fleet with what it knows
/// beside the backend, or fails a call whose write was made (a process killed right after it).
/// Every [`Interceptor`] is one, which sees only the writes. [`Intercepted`] forwards every
/// other method of [`Backend`], so whatever wraps a backend through it drops none.
pub trait Around<F: Family, B: Backend<F>> {
    /// The fleet as the caller reads it.
    fn snapshot(&mut self, inner: &mut B) -> Result<F::Snapshot, BackendError> {
        inner.snapshot()
    }
    /// Asked before the write. An error refuses it: the write is not made and the call
    /// returns that error.
    fn before(&mut self, _inner: &mut B, _write: &Write<'_, F>) -> Result<(), BackendError> {
        Ok(())
    }
    /// Told what became of the write once the inner backend tried it (the operation's id for a
    /// [`Write::Submit`]). An error here is what the call returns, whatever the write did.
    fn after(
        &mut self,
        _inner: &mut B,
        _write: &Write<'_, F>,
        _made: Result<Option<&F::OpId>, &BackendError>,
    ) -> Result<(), BackendError> {
        Ok(())
    }
}

impl<F: Family, B: Backend<F>, I: Interceptor<F>> Around<F, B> for I {
    fn before(&mut self, _inner: &mut B, write: &Write<'_, F>) -> Result<(), BackendError> {
        Interceptor::before(self, write)
    }
    fn after(
        &mut self,
        _inner: &mut B,
        write: &Write<'_, F>,
        made: Result<Option<&F::OpId>, &BackendError>,
    ) -> Result<(), BackendError> {
        if let Ok(id) = made {
            Interceptor::after(self, write, id);
        }
        Ok(())
    }
}

/// A backend whose every write goes past an [`Interceptor`] (or an [`Around`]); reads, queries
/// and the end of a pass go straight through. Every method of [`Backend`] is forwarded here,
/// defaulted ones too, so an inner backend's own `finish_pass`, `flush` or `guard_writes`
/// always runs.
pub struct Intercepted<B, I> {
    pub inner: B,
    pub by: I,
}

impl<B, I> Intercepted<B, I> {
    pub fn wrap(inner: B, by: I) -> Self {
        Intercepted { inner, by }
    }
}

impl<B, I> Intercepted<B, I> {
    /// A write that returns nothing, between the two hooks.
    fn write<F: Family>(
        &mut self,
        write: Write<'_, F>,
        make: impl FnOnce(&mut B) -> Result<(), BackendError>,
    ) -> Result<(), BackendError>
    where
        B: Backend<F>,
        I: Around<F, B>,
    {
        self.by.before(&mut self.inner, &write)?;
        let made = make(&mut self.inner);
        self.by
            .after(&mut self.inner, &write, made.as_ref().map(|()| None))?;
        made
    }
}

impl<F: Family, B: Backend<F>, I: Around<F, B>> Backend<F> for Intercepted<B, I> {
    fn snapshot(&mut self) -> Result<F::Snapshot, BackendError> {
        self.by.snapshot(&mut self.inner)
    }
    fn add_marks(
        &mut self,
        object: &ObjectRef,
        marks: &[String],
        reason: &str,
    ) -> Result<(), BackendError> {
        let w = Write::AddMarks {
            object,
            marks,
            reason,
        };
        self.write(w, |b| b.add_marks(object, marks, reason))
    }
    fn remove_marks(
        &mut self,
        object: &ObjectRef,
        marks: &[String],
        reason: &str,
    ) -> Result<(), BackendError> {
        let w = Write::RemoveMarks {
            object,
            marks,
            reason,
        };
        self.write(w, |b| b.remove_marks(object, marks, reason))
    }
    fn submit(
        &mut self,
        target: &str,
        op: &F::Op,
        reason: &str,
        after: Option<&F::OpId>,
    ) -> Result<F::OpId, BackendError> {
        let w = Write::Submit {
            target,
            op,
            reason,
            after,
        };
        self.by.before(&mut self.inner, &w)?;
        let made = self.inner.submit(target, op, reason, after);
        self.by
            .after(&mut self.inner, &w, made.as_ref().map(Some))?;
        made
    }
    fn advance(
        &mut self,
        object: &ObjectRef,
        op: &F::Op,
        reason: &str,
    ) -> Result<(), BackendError> {
        let w = Write::Advance { object, op, reason };
        self.write(w, |b| b.advance(object, op, reason))
    }
    fn can_follow(&self, op: &F::Op) -> bool {
        self.inner.can_follow(op)
    }
    fn supports(&self, step: F::Step) -> bool {
        self.inner.supports(step)
    }
    fn finish_pass(&mut self, now: i64) -> Result<(), BackendError> {
        self.inner.finish_pass(now)
    }
    fn flush(&mut self) -> Result<(), BackendError> {
        self.inner.flush()
    }
    fn wait_applied(&mut self, limit: std::time::Duration) -> Result<Applied, BackendError> {
        self.inner.wait_applied(limit)
    }
    fn guard_writes(&mut self, guard: WriteGuard) {
        self.inner.guard_writes(guard);
    }
    fn cancel_unstarted(
        &mut self,
        covered: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<(String, F::OpId)>, BackendError> {
        self.inner.cancel_unstarted(covered)
    }
    fn writes_made(&self) -> Option<usize> {
        self.inner.writes_made()
    }
    fn suspended_meanwhile(&self) -> Option<String> {
        self.inner.suspended_meanwhile()
    }
}

/// Lets `budget` writes through, then fails every write as if the process had been killed
/// right there. The crash tests and the chaos simulator use it, as [`Dying`].
#[cfg(any(test, feature = "testkit"))]
pub struct Budget {
    budget: Option<usize>,
    /// Writes made so far.
    pub calls: usize,
}

#[cfg(any(test, feature = "testkit"))]
impl<F: Family> Interceptor<F> for Budget {
    fn before(&mut self, _: &Write<'_, F>) -> Result<(), BackendError> {
        if self.budget == Some(self.calls) {
            return Err(BackendError::Crashed { calls: self.calls });
        }
        self.calls += 1;
        Ok(())
    }
}

/// A backend that dies after a number of writes ([`Budget`]).
#[cfg(any(test, feature = "testkit"))]
pub type Dying<B> = Intercepted<B, Budget>;

#[cfg(any(test, feature = "testkit"))]
impl<B> Dying<B> {
    /// `None` never dies.
    pub fn new(inner: B, budget: Option<usize>) -> Self {
        Intercepted::wrap(inner, Budget { budget, calls: 0 })
    }

    /// Writes made so far.
    pub fn calls(&self) -> usize {
        self.by.calls
    }
}

impl<F: Family, B: Backend<F> + ?Sized> Backend<F> for &mut B {
    fn snapshot(&mut self) -> Result<F::Snapshot, BackendError> {
        (**self).snapshot()
    }
    fn guard_writes(&mut self, guard: WriteGuard) {
        (**self).guard_writes(guard);
    }
    fn add_marks(&mut self, o: &ObjectRef, t: &[String], r: &str) -> Result<(), BackendError> {
        (**self).add_marks(o, t, r)
    }
    fn remove_marks(&mut self, o: &ObjectRef, t: &[String], r: &str) -> Result<(), BackendError> {
        (**self).remove_marks(o, t, r)
    }
    fn submit(
        &mut self,
        t: &str,
        op: &F::Op,
        r: &str,
        a: Option<&F::OpId>,
    ) -> Result<F::OpId, BackendError> {
        (**self).submit(t, op, r, a)
    }
    fn advance(&mut self, o: &ObjectRef, op: &F::Op, r: &str) -> Result<(), BackendError> {
        (**self).advance(o, op, r)
    }
    fn can_follow(&self, op: &F::Op) -> bool {
        (**self).can_follow(op)
    }
    fn supports(&self, step: F::Step) -> bool {
        (**self).supports(step)
    }
    fn finish_pass(&mut self, now: i64) -> Result<(), BackendError> {
        (**self).finish_pass(now)
    }
    fn flush(&mut self) -> Result<(), BackendError> {
        (**self).flush()
    }
    fn wait_applied(&mut self, limit: std::time::Duration) -> Result<Applied, BackendError> {
        (**self).wait_applied(limit)
    }
    fn cancel_unstarted(
        &mut self,
        covered: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<(String, F::OpId)>, BackendError> {
        (**self).cancel_unstarted(covered)
    }
    fn writes_made(&self) -> Option<usize> {
        (**self).writes_made()
    }
    fn suspended_meanwhile(&self) -> Option<String> {
        (**self).suspended_meanwhile()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::fixture::{Fixture, FixtureLevel, FixtureRoom};

    /// Notes every call that reaches it, by method name.
    #[derive(Default)]
    pub(crate) struct Probe {
        pub(crate) calls: Vec<&'static str>,
    }

    impl Backend<Fixture> for Probe {
        fn snapshot(&mut self) -> Result<FixtureRoom, BackendError> {
            self.calls.push("snapshot");
            Ok(FixtureRoom::default())
        }
        fn add_marks(&mut self, _: &ObjectRef, _: &[String], _: &str) -> Result<(), BackendError> {
            self.calls.push("add_marks");
            Ok(())
        }
        fn remove_marks(
            &mut self,
            _: &ObjectRef,
            _: &[String],
            _: &str,
        ) -> Result<(), BackendError> {
            self.calls.push("remove_marks");
            Ok(())
        }
        fn submit(
            &mut self,
            _: &str,
            _: &FixtureLevel,
            _: &str,
            _: Option<&u32>,
        ) -> Result<u32, BackendError> {
            self.calls.push("submit");
            Ok(7)
        }
        fn advance(
            &mut self,
            _: &ObjectRef,
            _: &FixtureLevel,
            _: &str,
        ) -> Result<(), BackendError> {
            self.calls.push("advance");
            Ok(())
        }
        fn can_follow(&self, _: &FixtureLevel) -> bool {
            false
        }
        fn supports(&self, _: FixtureLevel) -> bool {
            false
        }
        fn finish_pass(&mut self, _: i64) -> Result<(), BackendError> {
            self.calls.push("finish_pass");
            Ok(())
        }
        fn flush(&mut self) -> Result<(), BackendError> {
            self.calls.push("flush");
            Ok(())
        }
        fn wait_applied(&mut self, _: std::time::Duration) -> Result<Applied, BackendError> {
            self.calls.push("wait_applied");
            Ok(Applied::NotYet("probe".into()))
        }
        fn guard_writes(&mut self, _: WriteGuard) {
            self.calls.push("guard_writes");
        }
        fn cancel_unstarted(
            &mut self,
            covered: &dyn Fn(&str) -> bool,
        ) -> Result<Vec<(String, u32)>, BackendError> {
            self.calls.push("cancel_unstarted");
            Ok(vec![("b1".to_owned(), 7)]
                .into_iter()
                .filter(|(t, _)| covered(t))
                .collect())
        }
        fn suspended_meanwhile(&self) -> Option<String> {
            Some("box/b1".into())
        }
    }

    /// Calls every method of the trait once, defaulted ones too; the answers of the two
    /// queries are returned so that a wrapper answering with the trait's default shows.
    pub(crate) fn call_every_method(b: &mut dyn Backend<Fixture>) -> (bool, bool) {
        let o = ObjectRef::new("box", "b1");
        let marks = ["m".to_owned()];
        b.snapshot().unwrap();
        b.add_marks(&o, &marks, "r").unwrap();
        b.remove_marks(&o, &marks, "r").unwrap();
        assert_eq!(b.submit("b1", &FixtureLevel::Nudge, "r", None).unwrap(), 7);
        b.advance(&o, &FixtureLevel::Nudge, "r").unwrap();
        b.finish_pass(0).unwrap();
        b.flush().unwrap();
        assert_eq!(
            b.wait_applied(std::time::Duration::ZERO).unwrap(),
            Applied::NotYet("probe".into())
        );
        b.guard_writes(std::sync::Arc::new(|| Ok(None)));
        assert_eq!(
            b.cancel_unstarted(&|t| t == "b1").unwrap(),
            [("b1".to_owned(), 7)]
        );
        assert_eq!(b.suspended_meanwhile().as_deref(), Some("box/b1"));
        (
            b.can_follow(&FixtureLevel::Nudge),
            b.supports(FixtureLevel::Nudge),
        )
    }

    pub(crate) const EVERY_CALL: [&str; 10] = [
        "snapshot",
        "add_marks",
        "remove_marks",
        "submit",
        "advance",
        "finish_pass",
        "flush",
        "wait_applied",
        "guard_writes",
        "cancel_unstarted",
    ];

    #[test]
    fn every_wrapper_hands_every_call_to_its_backend_once() {
        let mut probe = Probe::default();
        let answers = call_every_method(&mut &mut probe);
        assert_eq!(probe.calls, EVERY_CALL, "through &mut");
        assert_eq!(answers, (false, false), "through &mut");

        let mut dying = Dying::new(Probe::default(), None);
        let answers = call_every_method(&mut dying);
        assert_eq!(dying.inner.calls, EVERY_CALL, "through Dying");
        assert_eq!(answers, (false, false), "through Dying");

        let mut passed = Intercepted::wrap(Probe::default(), ());
        let answers = call_every_method(&mut passed);
        assert_eq!(passed.inner.calls, EVERY_CALL, "through Intercepted");
        assert_eq!(answers, (false, false), "through Intercepted");

        let mut around = Intercepted::wrap(Probe::default(), Passive);
        let answers = call_every_method(&mut around);
        assert_eq!(around.inner.calls, EVERY_CALL, "through an Around");
        assert_eq!(answers, (false, false), "through an Around");
    }

    /// Refuses every write with an error of its own, and notes what it was told was made.
    #[derive(Default)]
    struct Brake {
        refuse: bool,
        seen: Vec<String>,
        made: Vec<String>,
    }

    fn kind(w: &Write<'_, Fixture>) -> String {
        match w {
            Write::AddMarks { marks, .. } => format!("add {}", marks.join(",")),
            Write::RemoveMarks { marks, .. } => format!("remove {}", marks.join(",")),
            Write::Submit { op, .. } => format!("submit {op}"),
            Write::Advance { op, .. } => format!("advance {op}"),
        }
    }

    impl Interceptor<Fixture> for Brake {
        fn before(&mut self, w: &Write<'_, Fixture>) -> Result<(), BackendError> {
            self.seen.push(kind(w));
            if self.refuse {
                return Err(BackendError::Halted("braked".into()));
            }
            Ok(())
        }
        fn after(&mut self, w: &Write<'_, Fixture>, id: Option<&u32>) {
            self.made.push(format!("{} -> {id:?}", kind(w)));
        }
    }

    #[test]
    fn an_interceptor_sees_every_write_and_may_refuse_any() {
        let o = ObjectRef::new("box", "b1");
        let m = ["m".to_owned()];
        for refuse in [false, true] {
            let brake = Brake {
                refuse,
                ..Brake::default()
            };
            let mut b = Intercepted::wrap(Probe::default(), brake);
            let results = [
                b.add_marks(&o, &m, "r"),
                b.remove_marks(&o, &m, "r"),
                b.submit("b1", &FixtureLevel::Replace, "r", None)
                    .map(|_| ()),
                b.advance(&o, &FixtureLevel::Nudge, "r"),
            ];
            let writes = ["add m", "remove m", "submit replace", "advance nudge"];
            assert_eq!(b.by.seen, writes);
            if refuse {
                assert!(
                    results
                        .iter()
                        .all(|r| matches!(r, Err(BackendError::Halted(w)) if w == "braked"))
                );
                assert!(b.inner.calls.is_empty(), "{:?}", b.inner.calls);
                assert!(b.by.made.is_empty(), "{:?}", b.by.made);
            } else {
                assert!(results.iter().all(Result::is_ok));
                assert_eq!(
                    b.inner.calls,
                    ["add_marks", "remove_marks", "submit", "advance"]
                );
                let made = [
                    "add m -> None",
                    "remove m -> None",
                    "submit replace -> Some(7)",
                    "advance nudge -> None",
                ];
                assert_eq!(b.by.made, made);
            }
        }
    }

    /// An [`Around`] with every hook left as it is.
    struct Passive;

    impl Around<Fixture, Probe> for Passive {}

    /// Sees the backend it wraps: reads the fleet its own way, counts the calls the inner
    /// backend had before each write, and fails every write the inner backend made.
    #[derive(Default)]
    struct World {
        calls_before: Vec<usize>,
        outcomes: Vec<String>,
        fail_made: bool,
    }

    impl Around<Fixture, Probe> for World {
        fn snapshot(&mut self, inner: &mut Probe) -> Result<FixtureRoom, BackendError> {
            inner.calls.push("world snapshot");
            Ok(FixtureRoom::default())
        }
        fn before(
            &mut self,
            inner: &mut Probe,
            _: &Write<'_, Fixture>,
        ) -> Result<(), BackendError> {
            self.calls_before.push(inner.calls.len());
            Ok(())
        }
        fn after(
            &mut self,
            _: &mut Probe,
            w: &Write<'_, Fixture>,
            made: Result<Option<&u32>, &BackendError>,
        ) -> Result<(), BackendError> {
            self.outcomes.push(format!(
                "{} -> {:?}",
                kind(w),
                made.map_err(ToString::to_string)
            ));
            if self.fail_made && made.is_ok() {
                return Err(BackendError::Crashed { calls: 0 });
            }
            Ok(())
        }
    }

    #[test]
    fn an_around_sees_the_backend_it_wraps_and_may_fail_a_write_that_was_made() {
        let o = ObjectRef::new("box", "b1");
        let m = ["m".to_owned()];
        for fail_made in [false, true] {
            let world = World {
                fail_made,
                ..World::default()
            };
            let mut b = Intercepted::wrap(Probe::default(), world);
            b.snapshot().unwrap();
            let results = [
                b.add_marks(&o, &m, "r"),
                b.submit("b1", &FixtureLevel::Replace, "r", None)
                    .map(|_| ()),
                b.advance(&o, &FixtureLevel::Nudge, "r"),
            ];
            assert_eq!(
                b.inner.calls,
                ["world snapshot", "add_marks", "submit", "advance"]
            );
            assert_eq!(b.by.calls_before, [1, 2, 3]);
            assert_eq!(
                b.by.outcomes,
                [
                    "add m -> Ok(None)",
                    "submit replace -> Ok(Some(7))",
                    "advance nudge -> Ok(None)"
                ]
            );
            assert!(
                results.iter().all(|r| if fail_made {
                    matches!(r, Err(BackendError::Crashed { .. }))
                } else {
                    r.is_ok()
                }),
                "{results:?}"
            );
        }
    }

    /// A failure of the service is said as the service says it, and its type stays there for
    /// whoever must tell one failure from another.
    #[test]
    fn a_service_failure_keeps_its_words_and_its_type() {
        #[derive(Debug, thiserror::Error)]
        #[error("the fleet service at u refused: try later")]
        struct Refused;

        let mut e = BackendError::service(Refused);
        assert_eq!(e.to_string(), "the fleet service at u refused: try later");
        assert!(std::error::Error::source(&e).is_none());
        assert!(e.service_error::<Refused>().is_some());
        assert!(e.service_error_mut::<Refused>().is_some());
        assert!(e.service_error::<std::io::Error>().is_none());
        assert!(
            BackendError::Halted("x".into())
                .service_error::<Refused>()
                .is_none()
        );
    }

    #[test]
    fn a_dying_backend_makes_its_budget_of_writes_and_no_more() {
        let o = ObjectRef::new("box", "b1");
        let mut b = Dying::new(Probe::default(), Some(2));
        b.add_marks(&o, &[], "r").unwrap();
        b.submit("b1", &FixtureLevel::Nudge, "r", None).unwrap();
        let died = b.advance(&o, &FixtureLevel::Nudge, "r");
        assert!(
            matches!(died, Err(BackendError::Crashed { calls: 2 })),
            "{died:?}"
        );
        assert!(b.remove_marks(&o, &[], "r").is_err());
        assert_eq!(b.calls(), 2);
        assert_eq!(b.inner.calls, ["add_marks", "submit"]);
    }
}
