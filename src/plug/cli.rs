//! Command-line pieces the face and a family share.

use crate::engine::text::{parse_duration, parse_positive_duration, parse_time};
use clap::{Args, Subcommand};

#[derive(Debug, Args, Clone, Copy)]
pub struct ClockArgs {
    /// Pretend it is this time, RFC 3339 or Unix seconds (for replays and tests) [default: now].
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub now: Option<i64>,
}

/// `-o FORMAT`: how a command that shows the fleet prints it, as kubectl's `-o`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One JSON document (as --json).
    Json,
    /// One YAML document.
    Yaml,
    /// The table with more columns.
    Wide,
    /// Only each row's name, as KIND/NAME, one a line (for scripts).
    Name,
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
    /// `autorepair auto-repair …`, dispatched with the queue's verbs.
    #[command(skip)]
    Auto(AutoRepairCommand),
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
