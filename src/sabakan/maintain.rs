//! `sabakan update --write FILE` and the commands on what it keeps beside FILE: the edge that
//! reads and writes those files, runs the apply command and loops. What the files are:
//! [`super::service`].

use super::cli::{CliError, Done, Failure, SourceArgs, UpdateArgs, fail, generate_or_update};
use super::client::Variables;
use super::generator::Action;
use super::service::{self, Change, LOG_TARGET, beside};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

const PREV: &str = ".prev";
const NEW: &str = ".new";
const HISTORY: &str = ".history";
const VARIABLES: &str = ".variables.json";
const DISABLED: &str = ".disabled";

fn io_error(what: &str, path: &Path, e: std::io::Error) -> CliError {
    fail(Failure::Usage, format!("{what} {}: {e}", path.display()))
}

/// Whether the integration of `file` is disabled (`sabakan disable FILE`): anything at the
/// marker's path disables it, a link to nothing included. What cannot be checked is an error,
/// not "enabled".
pub fn disabled(file: &Path) -> Result<bool, CliError> {
    let marker = beside(file, DISABLED);
    crate::files::something_at(&marker).map_err(|e| {
        io_error(
            "cannot tell whether the integration is disabled: cannot read",
            &marker,
            e,
        )
    })
}

/// `sabakan enable|disable FILE`.
pub fn enable(file: &Path, on: bool) -> Result<String, CliError> {
    let marker = beside(file, DISABLED);
    if on {
        match std::fs::remove_file(&marker) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error("cannot remove", &marker, e)),
        }
        Ok(format!(
            "sabakan integration of {} enabled\n",
            file.display()
        ))
    } else {
        // A typo would leave a marker that disables nothing while the real file goes on
        // being changed.
        if !file.exists() {
            return Err(fail(
                Failure::Usage,
                format!(
                    "{}: no such file, so there is nothing to disable: check the name (the file `update --write` maintains)",
                    file.display()
                ),
            ));
        }
        crate::files::write_atomically(
            &marker,
            b"sabakan integration disabled: `autorepair sabakan enable FILE` removes this file\n",
        )
        .map_err(|e| io_error("cannot write", &marker, e))?;
        Ok(format!(
            "sabakan integration of {} disabled: update --write leaves it as it is\n",
            file.display()
        ))
    }
}

/// `sabakan set-variables FILE VARIABLES`: checked as sabakan would, then stored as given.
pub fn set_variables(file: &Path, variables: &Path) -> Result<String, CliError> {
    let text = super::cli::read(variables, "variables")?;
    Variables::parse(&text)
        .map_err(|e| fail(Failure::Usage, format!("{}: {e}", variables.display())))?;
    let stored = beside(file, VARIABLES);
    crate::files::write_atomically(&stored, text.as_bytes())
        .map_err(|e| io_error("cannot write", &stored, e))?;
    Ok(format!("query variables stored in {}\n", stored.display()))
}

/// `sabakan get-variables FILE`.
pub fn get_variables(file: &Path) -> Result<String, CliError> {
    let stored = beside(file, VARIABLES);
    match crate::files::read_optional_text(&stored) {
        Ok(Some(text)) => Ok(text),
        Ok(None) => Ok(format!(
            "no variables stored ({}): the query's defaults, which leave out boot and RETIRED machines\n",
            stored.display()
        )),
        Err(e) => Err(io_error("cannot read", &stored, e)),
    }
}

/// `sabakan history FILE`.
pub fn history(file: &Path, json: bool) -> Result<String, CliError> {
    let path = beside(file, HISTORY);
    let text = match crate::files::read_text(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(format!(
                "no change recorded for {} ({} does not exist)\n",
                file.display(),
                path.display()
            ));
        }
        Err(e) => return Err(io_error("cannot read", &path, e)),
    };
    if json {
        return Ok(text);
    }
    let changes =
        service::parse_history(&text, &path).map_err(|e| fail(Failure::Usage, e.to_string()))?;
    Ok(changes.iter().map(service::show_change).collect())
}

/// `sabakan update --write FILE`: one pass, or a loop of them.
pub fn run(args: &UpdateArgs, out: &mut impl Write) -> Result<Done, CliError> {
    let file = args.maintain.write.as_deref().expect("called with --write");
    let mut source = args.source.clone();
    if source.variables.is_none() && source.sabakan.is_some() {
        // A stored query that is there but unreadable (a link to nothing) is read, and
        // refused with its name, rather than replaced by the query's defaults.
        let stored = beside(file, VARIABLES);
        if crate::files::something_at(&stored).map_err(|e| io_error("cannot read", &stored, e))? {
            source.variables = Some(stored);
        }
    }
    if !args.maintain.run_loop {
        return locked_pass(file, &source, args, out);
    }
    let mut changed = false;
    // sabakan down is said once, not every interval, and its return once too.
    let mut down = false;
    let mut pass = 0u32;
    loop {
        let started = Instant::now();
        pass += 1;
        let failure = match locked_pass(file, &source, args, out) {
            Ok(done) => {
                if down {
                    tracing::info!(target: LOG_TARGET, pass, "sabakan answers again");
                    down = false;
                }
                changed |= done == Done::Changed;
                None
            }
            Err(e) if e.failure == Failure::Unreachable => {
                if down {
                    tracing::debug!(target: LOG_TARGET, pass, "{}; round skipped", e.message);
                } else {
                    tracing::warn!(target: LOG_TARGET, pass, "{}; round skipped, as CKE does, until it answers (said once)", e.message);
                    down = true;
                }
                Some(e)
            }
            Err(e) if e.failure == Failure::Busy => {
                tracing::warn!(target: LOG_TARGET, pass, "{}; trying again next interval", e.message);
                Some(e)
            }
            Err(e) => {
                tracing::error!(target: LOG_TARGET, pass, error = %e.message, "pass failed; trying again next interval");
                Some(e)
            }
        };
        // A stop signal during the pass's apply command: it was waited for and recorded.
        if args.maintain.passes.is_some_and(|n| pass >= n) || crate::child::stop_requested() {
            // A change wins over the last pass's failure: a cron wrapper that applies the file
            // on exit 5 must not miss it, and the failure was logged (the next run meets it
            // again if it lasts).
            return match failure {
                Some(e) if changed => {
                    tracing::warn!(target: LOG_TARGET, pass, "the last pass failed ({}), but an earlier one changed the file: exit 5", e.message);
                    Ok(Done::Changed)
                }
                Some(e) => Err(e),
                None if changed => Ok(Done::Changed),
                None => Ok(Done::Unchanged),
            };
        }
        std::thread::sleep(args.maintain.interval.saturating_sub(started.elapsed()));
    }
}

/// One pass under `FILE.lock`, held while the pass reads and writes, never between passes. A
/// `--dry-run` that writes no metrics writes nothing, and takes no lock, as every read-only
/// verb: it reads FILE whole, as it is always replaced whole.
fn locked_pass(
    file: &Path,
    source: &SourceArgs,
    args: &UpdateArgs,
    out: &mut impl Write,
) -> Result<Done, CliError> {
    if args.maintain.dry_run && args.maintain.metrics.is_none() {
        return pass(file, source, args, out);
    }
    let lock = service::lock_path(file).map_err(|e| {
        fail(
            Failure::Usage,
            format!(
                "the directory of {} (where its lock, history and previous version are kept): {e}",
                file.display()
            ),
        )
    })?;
    let _held = crate::lock::acquire(&lock).map_err(|e| {
        let failure = match e {
            crate::lock::LockError::Busy { .. } => Failure::Busy,
            _ => Failure::Usage,
        };
        fail(failure, format!("{e}"))
    })?;
    pass(file, source, args, out)
}

fn pass(
    file: &Path,
    source: &SourceArgs,
    args: &UpdateArgs,
    out: &mut impl Write,
) -> Result<Done, CliError> {
    let m = &args.maintain;
    let shown = file.display();
    if disabled(file)? {
        tracing::info!(target: LOG_TARGET, "sabakan integration of {shown} is disabled (`autorepair sabakan enable {shown}`): left as it is");
        super::cli::print(out, &format!("{shown}: disabled, left as it is\n"))?;
        return Ok(Done::Unchanged);
    }
    if !m.dry_run {
        earlier_apply_ended(file)?;
    }
    let (old, mut stamp) = match crate::files::read_input(file) {
        Ok(input) => (Some(input.text), Some(input.stamp)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, None),
        Err(e) => return Err(io_error("cannot read the cluster file", file, e)),
    };
    let path_buf = file.to_path_buf();
    let generated = generate_or_update(source, old.as_deref().map(|t| (&path_buf, t)), true);
    let now = super::cli::pass_time(source)?;
    if let Some(metrics) = &m.metrics {
        // As CKE: a refusal is an unsuccessful generation; an unreachable sabakan or a bad
        // input is no generation at all, and leaves the metrics as they were.
        let counts = match &generated {
            Ok(g) => Some(Some(&g.counts)),
            Err(e) if e.failure == Failure::Refused => Some(None),
            Err(_) => None,
        };
        if let Some(counts) = counts {
            let prev = crate::files::read_text(metrics).unwrap_or_default();
            let text = service::metrics(&prev, counts, now.as_second());
            crate::metrics::write_atomically(metrics, &text)
                .map_err(|e| io_error("cannot write the metrics file", metrics, e))?;
        }
    }
    let g = generated?;
    if source.json {
        super::cli::print(out, &super::cli::render(source, &g.outcome, &g.yaml))?;
    }
    let old_text = old.as_deref().unwrap_or("");
    if old.is_some() && g.yaml == old_text {
        tracing::debug!(target: LOG_TARGET, "{shown}: {}", g.outcome.why);
        if !source.json {
            super::cli::print(out, &format!("{shown}: unchanged\n"))?;
        }
        return Ok(Done::Unchanged);
    }
    let summary = format!("{shown}: {}: {}\n", g.outcome.action, g.outcome.why);
    if m.dry_run {
        let d = service::diff(old_text, &g.yaml, &shown.to_string());
        super::cli::print(out, &d)?;
        if !source.json {
            super::cli::print(out, &format!("(dry run, not written) {summary}"))?;
        }
        return Ok(Done::Changed);
    }
    if let Some(program) = &m.ready_command
        && let Some(why) = not_ready(program, file, m)?
    {
        tracing::info!(target: LOG_TARGET, file = %shown, action = %g.outcome.action, "the change waits: {why}");
        if !source.json {
            super::cli::print(
                out,
                &format!(
                    "{shown}: {} waits: {why}; a later pass makes it once the command says ready\n",
                    g.outcome.action
                ),
            )?;
        }
        return Ok(Done::Unchanged);
    }
    // With an apply command the change is staged in FILE.new and takes FILE's place only once
    // applied: a pass killed while the command runs leaves FILE as last applied, so the next
    // pass finds the same change to make, instead of a file that already shows it.
    let applied = if m.apply.is_empty() {
        None
    } else {
        let staged = beside(file, NEW);
        crate::files::write_atomically(&staged, g.yaml.as_bytes())
            .map_err(|e| io_error("cannot write", &staged, e))?;
        Some(apply(file, &staged, m)?)
    };
    let prev = beside(file, PREV);
    if let Some(old) = &old {
        crate::files::write_atomically(&prev, old.as_bytes())
            .map_err(|e| io_error("cannot keep the previous version in", &prev, e))?;
    }
    // Not over a file someone edited while the pass generated (and applied) its change.
    crate::files::save(file, g.yaml.as_bytes(), &mut stamp)
        .map_err(|e| io_error("cannot write", file, e))?;
    if applied.is_some() {
        let staged = beside(file, NEW);
        if let Err(e) = std::fs::remove_file(&staged) {
            tracing::warn!(target: LOG_TARGET, "cannot remove {}: {e}", staged.display());
        }
    }
    let change = Change::new(
        jiff::Timestamp::from_second(now.as_second())
            .expect("a second of a valid time")
            .to_string(),
        &g.outcome,
        applied,
    );
    // The change is made and applied: a history that cannot be kept is no reason to undo it.
    if let Err(why) = record(&beside(file, HISTORY), &change, now.as_second()) {
        tracing::warn!(target: LOG_TARGET, "{why}");
    }
    tracing::info!(
        target: LOG_TARGET,
        file = %shown,
        action = %g.outcome.action,
        why = %g.outcome.why,
        changes = ?g.outcome.changes,
        choices = %super::generator::choices_summary(&g.outcome.choices),
        "cluster configuration changed (every candidate's score: sabakan history FILE, or --json)"
    );
    debug_assert_ne!(g.outcome.action, Action::None);
    if !source.json {
        super::cli::print(out, &summary)?;
    }
    Ok(Done::Changed)
}

/// Adds `change` to the history `hist`. Lines that cannot be read are no reason to lose the
/// others: the file as it was is kept aside first (`HIST.bad-<now>`), and the new history holds
/// its readable changes. Nothing is overwritten that was not kept: a history that cannot be
/// read at all, or a copy that cannot be made, leaves the file as it is.
fn record(hist: &Path, change: &Change, now: i64) -> Result<(), RecordError> {
    let shown = hist.display();
    let bytes = match crate::files::read_input_bytes(hist).map(|(bytes, _)| bytes) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(source) => {
            return Err(RecordError::Read {
                path: hist.to_owned(),
                source,
            });
        }
    };
    let (kept, bad) = service::read_history(&bytes, hist);
    let unreadable = bad.len();
    if let Some(first) = bad.into_iter().next() {
        let aside = free_name(hist, now);
        if let Err(source) = crate::files::write_atomically(&aside, &bytes) {
            return Err(RecordError::KeepAside {
                first: Box::new(first),
                aside,
                source,
            });
        }
        tracing::warn!(
            target: LOG_TARGET,
            "{first}{}; the file as it was is kept in {}, and its {} readable change(s) in {shown}",
            match unreadable {
                1 => String::new(),
                n => format!(" (and {} more unreadable line(s))", n - 1),
            },
            aside.display(),
            kept.len()
        );
    }
    let text = service::push_history(kept, change);
    crate::files::write_atomically(hist, text.as_bytes()).map_err(|source| RecordError::Write {
        path: hist.to_owned(),
        source,
    })
}

/// Why a change made was not added to the history: each names the file and leaves it as it
/// was.
#[derive(Debug, thiserror::Error)]
enum RecordError {
    #[error(
        "cannot read the history {}: {source}; left as it is, without this change",
        path.display()
    )]
    Read {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    /// `first` is the history's first unreadable line.
    #[error(
        "{first}; cannot keep a copy of it in {}: {source}; left as it is, without this change",
        aside.display()
    )]
    KeepAside {
        first: Box<service::HistoryError>,
        aside: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write the history {}: {source}", path.display())]
    Write {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}

/// `HIST.bad-<now>`, or `HIST.bad-<now>-<n>` for the first n that names no file yet: the pass
/// holds the lock, so no other pass takes the name meanwhile.
fn free_name(hist: &Path, now: i64) -> std::path::PathBuf {
    let free = |p: &Path| {
        std::fs::symlink_metadata(p).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
    };
    let base = beside(hist, &format!(".bad-{now}"));
    if free(&base) {
        return base;
    }
    (2u64..)
        .map(|n| beside(hist, &format!(".bad-{now}-{n}")))
        .find(|p| free(p))
        .unwrap_or(base)
}

/// Refuses the pass while the apply command of an earlier one still runs (its pass was killed:
/// the command was in a process group of its own, and lives on). Fails closed: a record that
/// cannot be read may name a command still running.
fn earlier_apply_ended(file: &Path) -> Result<(), CliError> {
    let record = service::applying_path(file)
        .map_err(|e| io_error("cannot find the directory of", file, e))?;
    let shown = record.display();
    match crate::child::read_record(&record) {
        crate::child::Recorded::Nothing => Ok(()),
        crate::child::Recorded::Ended => {
            tracing::info!(target: LOG_TARGET, "the apply command recorded in {shown} has ended: its pass was stopped before it; the change is made again");
            std::fs::remove_file(&record).map_err(|e| io_error("cannot remove", &record, e))
        }
        crate::child::Recorded::Running(id, _) => Err(fail(
            Failure::Busy,
            format!(
                "the apply command of an earlier pass still runs (pid {}, recorded in {shown}): \
no other is started while it does, and {} is left as it is until it has ended",
                id.pid,
                file.display()
            ),
        )),
        crate::child::Recorded::Unreadable(why) => Err(fail(
            Failure::Busy,
            format!(
                "{shown}: {why}: it records the apply command of an earlier pass, which may still \
run, so no pass is made; once no apply command of {} runs, remove {shown}",
                file.display()
            ),
        )),
    }
}

/// Why the change must wait, from the readiness command: `None` when it exits 0. One that
/// exits otherwise or runs past the time limit says "not ready" (the change waits, as CKE's own
/// integration waits while CKE is busy); one that cannot be started is a mistake in the flags.
fn not_ready(
    program: &Path,
    file: &Path,
    m: &super::cli::MaintainArgs,
) -> Result<Option<String>, CliError> {
    let timeout = m.apply_timeout.as_secs().max(1);
    let argv = [program.to_string_lossy().into_owned()];
    match crate::child::run_once(&argv, &file.to_string_lossy(), timeout) {
        Ok(_) => Ok(None),
        Err(
            e @ (crate::child::RunError::Exit { .. }
            | crate::child::RunError::Timeout { .. }
            | crate::child::RunError::Stopped { .. }),
        ) => Ok(Some(format!("the readiness command says not ready ({e})"))),
        Err(e) => Err(fail(
            Failure::Usage,
            format!("--ready-command: {e}; {} is left as it is", file.display()),
        )),
    }
}

/// Runs the apply command on the staged new version, recorded beside the lock while it runs;
/// when it fails, removes the staged version and leaves FILE as last applied, so the next pass
/// makes the same change again.
fn apply(file: &Path, staged: &Path, m: &super::cli::MaintainArgs) -> Result<String, CliError> {
    let timeout = m.apply_timeout.as_secs().max(1);
    let path = staged.to_string_lossy();
    let record = service::applying_path(file)
        .map_err(|e| io_error("cannot find the directory of", file, e))?;
    let keep = |pid: u32| {
        let id = crate::child::Identity::of_started(pid)?;
        crate::child::write_record(&record, &id.to_record())
    };
    let ran = crate::child::run_recorded(&m.apply, &path, timeout, keep);
    if let Err(e) = std::fs::remove_file(&record)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(target: LOG_TARGET, "cannot remove {}: {e}; the next pass sees the command ended", record.display());
    }
    match ran {
        Ok(output) => {
            tracing::info!(target: LOG_TARGET, command = %m.apply[0], output = %output.stdout.trim_end(), "apply command succeeded");
            Ok(output.stdout)
        }
        Err(e) => {
            let _ = std::fs::remove_file(staged);
            Err(fail(
                Failure::Apply,
                format!(
                    "the apply command failed: {e}; {} is left as last applied, and the change is tried again next pass",
                    file.display()
                ),
            ))
        }
    }
}
