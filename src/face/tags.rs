//! `tags lint`: any family's marks on its fleet. (`tags parse`, marks given as text, is
//! `plug::marks`, reached through the registry.)

use super::Exit;
use super::fleet::{connect, read_plan};
use super::printer::Printer;
use super::settings::{Clock, Fleet};
use crate::engine::marks::Codec;
use crate::plug::Error;
use crate::plug::FamilyFace;

/// Exit 1 if the fleet carries any invalid or conflicting autorepair mark.
pub fn lint<F: FamilyFace>(
    out: &mut Printer,
    fleet: &Fleet<F>,
    clock: Clock,
) -> Result<Exit, Error> {
    let plan = read_plan(fleet, clock, connect(fleet)?)?;
    let plan = &plan;
    for l in &plan.lint {
        // A mark's text and its object's name come from the fleet.
        out.item(
            || l,
            || crate::engine::text::shown(&l.to_string()).into_owned(),
        )?;
    }
    if !out.json() {
        out.note(format_args!(
            "{} {} problem(s)",
            plan.lint.len(),
            F::Marks::NOUN
        ));
    }
    Ok(if plan.lint.is_empty() {
        Exit::Ok
    } else {
        Exit::Partial
    })
}
