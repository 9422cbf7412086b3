//! Command-line pieces the face and a family share.

use crate::engine::text::parse_time;
use clap::{Args, Subcommand};

#[derive(Debug, Args, Clone, Copy)]
pub struct ClockArgs {
    /// Pretend it is this time, RFC 3339 or Unix seconds (for replays and tests) [default: now].
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub now: Option<i64>,
}

/// ckecli's repair-queue verbs, on the machines' labels.
#[derive(Debug, Subcommand)]
pub enum RepairCommand {
    /// Add a repair entry for the machine with ADDRESS (its spec.ipv4[0]).
    Add {
        operation: String,
        machine_type: String,
        address: String,
        #[command(flatten)]
        clock: ClockArgs,
    },
    /// List the repair entries (CKE's RepairQueueEntry fields).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Mark entries deleted: the next pass removes them (and uncordons their Nodes).
    Delete {
        /// The machine's address.
        #[arg(required_unless_present_any = ["finished", "unfinished"])]
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
}
