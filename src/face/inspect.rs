//! The commands that show the fleet and change nothing: `status`, `explain`, `report` (and
//! `snapshot`, the family's own: `FamilyFace::SNAPSHOT`).

use super::Exit;
use super::cli::Format;
use super::fleet::{connect, plan_of, read, read_plan};
use super::printer::Printer;
use super::settings::{Clock, Fleet, StatusView};
use crate::plug::Error;
use crate::plug::FamilyFace;
use crate::{
    admin, files,
    report::{self, html},
};
use std::path::Path;

pub fn status<F: FamilyFace>(
    out: &mut Printer,
    fleet: &Fleet<F>,
    clock: Clock,
    view: &StatusView,
) -> Result<Exit, Error> {
    let now = clock.now();
    let mut backend = connect(fleet)?;
    let snap = read(fleet, backend.as_mut())?;
    let settings = F::settings(&fleet.source, backend.as_ref());
    let mut plan = plan_of::<F>(fleet, &snap, &settings, now, 0);
    if !view.objects.is_empty() {
        let chosen = admin::select::<F>(&snap, &settings, now, &view.objects).map_err(|e| {
            Error::Select {
                from: fleet.describe(),
                source: e,
            }
        })?;
        plan.targets.retain(|t| chosen.contains(&t.name));
        plan.counts = plan.targets.iter().fold(Default::default(), |mut n, t| {
            *n.entry(t.state).or_default() += 1;
            n
        });
    }
    let plan = &plan;
    if view.format == Some(Format::Name) {
        for t in &plan.targets {
            out.line(t.object())?;
        }
        return Ok(Exit::Ok);
    }
    let table = || {
        let table = if view.format == Some(Format::Wide) {
            report::status_table_wide(plan)
        } else {
            report::status_table(plan)
        };
        if view.headers {
            return table;
        }
        // The header is the first line, then one line a target.
        let rows: Vec<&str> = table.lines().skip(1).take(plan.targets.len()).collect();
        rows.iter().map(|r| format!("{r}\n")).collect()
    };
    out.document(|| report::status_json(plan), table)?;
    Ok(Exit::Ok)
}

pub fn explain<F: FamilyFace>(
    out: &mut Printer,
    fleet: &Fleet<F>,
    clock: Clock,
    name: &str,
    names_only: bool,
) -> Result<Exit, Error> {
    let plan = read_plan(fleet, clock, connect(fleet)?)?;
    let plan = &plan;
    // One object syntax everywhere: `instance/NAME`, `machine/SERIAL`, `machine/NS/NAME` name
    // the target as the admin commands and the logs do; a bare name still works.
    let kind_name = name
        .strip_prefix(F::WORDS.target)
        .and_then(|rest| rest.strip_prefix('/'));
    // A short name as gnt-* expands it (`web1` for `web1.example.org`), when it names one.
    let expanded = |n: &str| {
        admin::expand(plan.targets.iter().map(|t| t.name.as_str()), n)
            .ok()
            .and_then(|full| plan.target(full))
    };
    let Some(t) = expanded(name).or_else(|| kind_name.and_then(expanded)) else {
        if let Ok(object) = F::parse_object(name)
            && !object.is(F::WORDS.target)
        {
            return Err(Error::NotATarget {
                object: object.to_string(),
                kind: F::WORDS.target,
                kinds: F::WORDS.targets,
            });
        }
        return Err(Error::NoSuchTarget {
            name: name.to_owned(),
            from: fleet.describe(),
            kind: F::WORDS.target,
            kinds: F::WORDS.targets,
        });
    };
    if names_only {
        out.line(t.object())?;
        return Ok(Exit::Ok);
    }
    out.document(|| t, || report::explain(plan, t))?;
    Ok(Exit::Ok)
}

/// Writes the fleet's page. It reads and plans as `status` does, and writes nothing to the
/// fleet: the backend is dropped unsaved.
pub fn report<F: FamilyFace>(
    out: &mut Printer,
    fleet: &Fleet<F>,
    clock: Clock,
    path: &Path,
) -> Result<Exit, Error> {
    let now = clock.now();
    let mut backend = connect(fleet)?;
    let snap = read(fleet, backend.as_mut())?;
    let settings = F::settings(&fleet.source, backend.as_ref());
    let plan = plan_of::<F>(fleet, &snap, &settings, now, 0);
    let index = F::index(&snap, &settings, now);
    let scopes: Vec<&str> = F::targets(&snap)
        .iter()
        .map(|t| F::report_scope(&index, t))
        .collect();
    let source = fleet.describe();
    let page = html::page(&html::Page {
        plan: &plan,
        limits: &fleet.limits,
        scopes: &scopes,
        source: &source,
    });
    // Readable by all, as a page a web server serves: it holds nothing the fleet's readers
    // may not see.
    files::write_atomically_mode(path, page.as_bytes(), 0o644).map_err(|source| Error::Report {
        path: path.to_owned(),
        source,
    })?;
    out.note(format_args!(
        "wrote the report of {} {} to {}",
        plan.targets.len(),
        F::WORDS.targets,
        path.display()
    ));
    Ok(Exit::Ok)
}
