//! The machines family's own commands: ckecli's verbs on the repair queue (`autorepair repair
//! …`) and on the trigger that fills it (`autorepair auto-repair …`), with CKE's words and
//! arguments, so that an operator's ckecli habits carry over.

use crate::engine::text::{parse_duration, parse_positive_duration};
use crate::plug::cli::{ClockArgs, Format};
use clap::Subcommand;

/// The commands the machines family adds to the command line.
#[derive(Debug, Subcommand)]
pub enum MachinesCommand {
    /// The machines family's repair entries, in ckecli's words (with --sabakan or --sabakan-file).
    #[command(subcommand)]
    Repair(RepairCommand),
    /// The machines family's trigger: its switch and its query, in ckecli's words (with
    /// --sabakan or --sabakan-file).
    #[command(subcommand)]
    AutoRepair(AutoRepairCommand),
}

impl MachinesCommand {
    /// Whether the command writes labels or files, and so takes the fleet's lock; those that
    /// only read take none, as `status` does (a file is replaced whole, so it is read whole),
    /// and so answer while a pass runs.
    pub fn writes(&self) -> bool {
        !matches!(
            self,
            MachinesCommand::Repair(
                RepairCommand::List { .. } | RepairCommand::IsEnabled | RepairCommand::Wait { .. }
            ) | MachinesCommand::AutoRepair(
                AutoRepairCommand::IsEnabled | AutoRepairCommand::GetVariables
            )
        )
    }
}

/// ckecli's repair-queue verbs, on the machines' labels.
#[derive(Debug, Subcommand)]
pub enum RepairCommand {
    /// Add a repair entry for the machine with ADDRESS (its spec.ipv4[0]).
    Add {
        operation: String,
        machine_type: String,
        address: String,
        /// The machine's serial, as ckecli takes it: refused unless the machine at ADDRESS
        /// has it.
        serial: Option<String>,
        #[command(flatten)]
        clock: ClockArgs,
    },
    /// List the repair entries (CKE's RepairQueueEntry fields).
    List {
        #[arg(long)]
        json: bool,
        /// json, yaml, wide (the table), or name (machine/SERIAL, one a line).
        #[arg(
            short = 'o',
            long = "output",
            value_name = "FORMAT",
            conflicts_with = "json"
        )]
        output: Option<Format>,
    },
    /// Mark entries deleted: the next pass removes them (and uncordons their Nodes).
    Delete {
        /// The entry's index (as ckecli's `delete INDEX`), or its machine's address.
        #[arg(
            value_name = "INDEX|ADDRESS",
            required_unless_present_any = ["finished", "unfinished"]
        )]
        address: Option<String>,
        /// Every finished (succeeded or failed) entry.
        #[arg(long, conflicts_with_all = ["address", "unfinished"])]
        finished: bool,
        /// Every unfinished entry.
        #[arg(long, conflicts_with = "address")]
        unfinished: bool,
    },
    /// Clear every entry's drain back-off.
    ResetBackoff,
    /// Let entries drain and run commands again.
    Enable,
    /// Stop new drains and commands; health checks and finishing go on.
    Disable,
    /// Print whether the queue is enabled: true or false.
    IsEnabled,
    /// Wait until no entry is left unfinished (each succeeded, failed or removed); exit 1 if
    /// some still are after --timeout.
    Wait {
        /// How long to wait at most [default: without end].
        #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
        timeout: Option<std::time::Duration>,
        /// How often to look at the entries.
        #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_positive_duration)]
        interval: std::time::Duration,
    },
}

/// ckecli's auto-repair verbs: the switch of the trigger that creates repair entries for the
/// machines sabakan reports broken, and the query it selects them with. CKE keeps this switch
/// apart from the queue's: disabled, no entry is created, while entries under way and those
/// `repair add` adds go on.
#[derive(Debug, Subcommand)]
pub enum AutoRepairCommand {
    /// Let the trigger create entries again.
    Enable,
    /// Stop the trigger: no entry is created for a broken machine until enabled.
    Disable,
    /// Print whether the trigger is enabled: true or false (false too when its switch cannot
    /// be read, which holds as disabled does).
    IsEnabled,
    /// Store the trigger's query: a JSON object with having and notHaving (labels, racks,
    /// roles, states, minDaysBeforeRetire), as `ckecli auto-repair set-variables` takes. It is
    /// kept beside the repair configuration (--repair-config FILE, in FILE.auto-repair.json)
    /// and read every pass.
    SetVariables {
        #[arg(value_name = "FILE")]
        file: std::path::PathBuf,
    },
    /// Print the trigger's query: the stored one, else the config's [machines.variables], else
    /// CKE's (UNHEALTHY and UNREACHABLE machines that are not boot servers).
    GetVariables,
}
