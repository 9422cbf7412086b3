//! What the files do not say: each machine's scripted state and the world's command runner
//! that answers from it, the pods on Nodes, and what ends by itself after some passes.

use super::*;

/// A machine's scripted state, which the world's runner answers from.
#[derive(Clone, Debug)]
pub(super) struct Phys {
    pub(super) serial: String,
    /// Broken, and the first step whose command cures it.
    pub(super) trouble: Option<Option<usize>>,
    pub(super) check: Check,
    pub(super) command: Cmd,
}

/// What a backend call that runs a command is about, set by the world before it lets the
/// machines file carry the call out.
#[derive(Clone, Debug)]
pub(super) struct Context {
    pub(super) serial: String,
    /// A repair step (0-based), `None` for the success command.
    pub(super) step: Option<usize>,
    /// Which entry of the machine it is: the world counts entries as they are created.
    pub(super) generation: u64,
    /// Why the machine is not drained, when its step needs a drain.
    pub(super) undrained: Option<String>,
}

/// A command the runner ran.
#[derive(Clone, Debug)]
pub(super) struct Ran {
    pub(super) context: Context,
}

/// What the world and its runner share.
#[derive(Default)]
pub(super) struct Shared {
    /// By address (what a command is given).
    pub(super) phys: BTreeMap<String, Phys>,
    pub(super) context: Option<Context>,
    pub(super) die_in_command: bool,
    pub(super) died: bool,
    /// This pass's commands.
    pub(super) runs: Vec<Ran>,
    pub(super) tally: BTreeMap<&'static str, usize>,
}

/// The runner the machines file uses in this world: answers from [`Phys`].
pub(super) struct SimRunner(pub(super) Arc<Mutex<Shared>>);

pub(super) fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    shared.lock().expect("the world's lock is never poisoned")
}

impl Runner for SimRunner {
    fn run(&self, cmd: &Command, address: &str) -> Result<(), RunError> {
        let mut s = lock(&self.0);
        let program = cmd.argv.first().cloned().unwrap_or_default();
        let context = s.context.clone().unwrap_or_else(|| Context {
            serial: address.to_owned(),
            step: None,
            generation: 0,
            undrained: None,
        });
        let died = context.step.is_some() && s.die_in_command;
        if died {
            s.die_in_command = false;
            s.died = true;
        }
        let how = s.phys.get(address).map_or(Cmd::Works, |p| p.command);
        let outcome = match how {
            _ if died => Ok(()),
            Cmd::Works => Ok(()),
            Cmd::Flaky if cmd.retries >= 1 => Ok(()),
            Cmd::Fails | Cmd::Flaky => Err(RunError::Exit {
                program,
                status: "exit status: 1".into(),
                stderr: String::new(),
            }),
            Cmd::Hangs => Err(RunError::Timeout {
                program,
                after: std::time::Duration::from_secs(cmd.timeout),
            }),
        };
        let mut cured = false;
        if let (Some(step), true) = (context.step, outcome.is_ok())
            && let Some(p) = s.phys.get_mut(address)
            && let Some(Some(by)) = p.trouble
            && step >= by
        {
            p.trouble = None;
            cured = true;
        }
        let mut count = |what| *s.tally.entry(what).or_default() += 1;
        match (context.step, &outcome) {
            (Some(_), Ok(())) => count("repair commands succeeded"),
            (Some(_), Err(RunError::Timeout { .. })) => count("repair commands hung"),
            (Some(_), Err(_)) => count("repair commands failed"),
            (None, Ok(())) => count("success commands run"),
            (None, Err(_)) => count("success commands failed"),
        }
        if cured {
            count("machines cured by a step");
        }
        if died {
            count("watcher deaths mid-command");
        }
        s.runs.push(Ran { context });
        outcome
    }

    fn healthy(&self, _argv: &[String], address: &str, timeout: u64) -> Result<bool, RunError> {
        let s = lock(&self.0);
        let Some(p) = s.phys.get(address) else {
            return Ok(false);
        };
        match p.check {
            Check::Works => Ok(p.trouble.is_none()),
            Check::Garbage => Ok(false),
            Check::Fails => Err(RunError::Exit {
                program: "sim-check".into(),
                status: "exit status: 1".into(),
                stderr: String::new(),
            }),
            Check::Hangs => Err(RunError::Timeout {
                program: "sim-check".into(),
                after: std::time::Duration::from_secs(timeout),
            }),
        }
    }
}

/// Pods on a Node, as a drain sees them.
#[derive(Clone, Debug, Default)]
pub(super) struct Pods {
    pub(super) count: usize,
    /// What a schedulable Node gets back between passes (0: only DaemonSet pods, which a
    /// drain leaves).
    pub(super) nominal: usize,
    /// Until when a PodDisruptionBudget refuses to let one of them go.
    pub(super) guarded_until: Option<i64>,
}

/// Something that ends by itself after some passes.
#[derive(Clone, Debug)]
pub(super) enum Timed {
    Pdb(String),
    RebootTool(String),
    Queue,
}
