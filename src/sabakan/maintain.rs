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

/// Whether the integration of `file` is disabled (`sabakan disable FILE`).
pub fn disabled(file: &Path) -> bool {
    beside(file, DISABLED).exists()
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
    match std::fs::read_to_string(&stored) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(format!(
            "no variables stored ({}): the query's defaults, which leave out boot and RETIRED machines\n",
            stored.display()
        )),
        Err(e) => Err(io_error("cannot read", &stored, e)),
    }
}

/// `sabakan history FILE`.
pub fn history(file: &Path, json: bool) -> Result<String, CliError> {
    let path = beside(file, HISTORY);
    let text = match std::fs::read_to_string(&path) {
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
        let stored = beside(file, VARIABLES);
        if stored.exists() {
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
        if args.maintain.passes.is_some_and(|n| pass >= n) {
            // The last pass's failure, if it failed; else whether any pass changed the file.
            return match failure {
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
    if disabled(file) {
        tracing::info!(target: LOG_TARGET, "sabakan integration of {shown} is disabled (`autorepair sabakan enable {shown}`): left as it is");
        super::cli::print(out, &format!("{shown}: disabled, left as it is\n"))?;
        return Ok(Done::Unchanged);
    }
    let old = match std::fs::read_to_string(file) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
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
            let prev = std::fs::read_to_string(metrics).unwrap_or_default();
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
    crate::files::write_atomically(file, g.yaml.as_bytes())
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
    let hist = beside(file, HISTORY);
    let before = std::fs::read_to_string(&hist).unwrap_or_default();
    let text = service::push_history(&before, &hist, &change);
    if let Err(e) = crate::files::write_atomically(&hist, text.as_bytes()) {
        // The change is made and applied: a history that cannot be kept is no reason to undo it.
        tracing::warn!(target: LOG_TARGET, "cannot write the history {}: {e}", hist.display());
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

/// Runs the apply command on the staged new version; when it fails, removes it and leaves
/// FILE as last applied, so the next pass makes the same change again.
fn apply(file: &Path, staged: &Path, m: &super::cli::MaintainArgs) -> Result<String, CliError> {
    let timeout = m.apply_timeout.as_secs().max(1);
    let path = staged.to_string_lossy();
    match crate::machines::command::run_once(&m.apply, &path, timeout) {
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
