//! The face's own text on the man page, in roff: what holds whatever the family. Each family's
//! text is its `FamilyFace::MAN`; the page joins them in [`super::page`].

/// The description up to the families' scopes.
pub const DESCRIPTION_HEAD: &str = r".PP
The fleet is one family's targets, what they run on and the scopes above them (";

/// Between the families' scopes and their marks.
pub const DESCRIPTION_MARKS: &str = r"), with all
their marks: ";

/// After the families' marks, up to their sources.
pub const DESCRIPTION_MID: &str = r". Everything
autorepair knows between passes is in those marks: it can be killed at any moment, and the next
pass carries on where it stopped, with no repair started twice.
.PP
Administrators steer it with marks on the cluster, the scopes and the targets; the admin
commands (\fBallow\fR, \fBsuspend\fR, \fBresume\fR, \fBrequest\fR, \fBclear\fR) write those marks
for them, and other tools may write a request themselves.
";

/// After the families' steering, up to their sources.
pub const DESCRIPTION_SOURCES: &str = r".PP
The fleet comes from one of these sources, each a flag of its own (or a key of the config file):
";

/// After the families' sources, up to their replicas.
pub const DESCRIPTION_REPLICAS: &str = r".PP
Run \fBautorepair run\fR every few minutes from \fBcron\fR(8) or a systemd timer, or keep one
\fBautorepair run --loop\fR running. On one host, the lock keeps passes apart. Several replicas
elect the one that acts on what the family already has; a fleet that has nothing to elect with
is run on one host only.
";

/// After the families' replicas.
pub const DESCRIPTION_TAIL: &str = r"\fBautorepair run --dry-run\fR, \fBstatus\fR and \fBexplain\fR show what it would do and why,
and change nothing; \fBreport --html\fR writes the same as one page a person can look at.
";

/// Before the global options.
pub const GLOBAL_OPTIONS_INTRO: &str = r"These options may be given before or after the command. Command-line options override the config
file.
";

/// Before the families' objects.
pub const COMMANDS_HEAD: &str = r"An \fIOBJECT\fR is \fIKIND\fR\fB/\fR\fINAME\fR or \fBcluster\fR, in the words of the fleet's family; a bare
name is a target. ";

/// Between the families' objects and their ladders.
pub const COMMANDS_LADDER: &str = r" A \fITYPE\fR is a level of the family's ladder, least destructive
first: ";

/// After the families' ladders.
pub const COMMANDS_TAIL: &str = r". A \fITIME\fR is RFC 3339 (\fB2026\-12\-01T00:00:00Z\fR) or Unix seconds, from 1970 up to
\fB9999\-12\-31T23:59:59Z\fR (\fB253402300799\fR); a \fIDURATION\fR, on the command line or in
the config file, is plain seconds or written like \fB90s\fR, \fB15min\fR, \fB2h\fR or
\fB3days\fR, at most 100 years (\fB100y\fR); \fB--interval\fR is at least \fB1s\fR. Times in tags are Unix seconds, shown as RFC 3339; a tag's time past
year 9999 (another tool may write one) is honoured and shown as \fB@\fR\fISECONDS\fR, and
\fBtags lint\fR reports it.
.PP
\fBrun\fR (without \fB--dry-run\fR) and the admin commands take the lock (see \fBFILES\fR);
\fBstatus\fR, \fBexplain\fR, \fBreport\fR, \fBtags\fR, \fBsimulate\fR, \fBsnapshot\fR and \fBrepair list\fR only read, and
run at any time. An admin command changes only autorepair tags of the object it names, prints
each change, and says so when there was nothing to change.
";

/// Before the config keys.
pub const CONFIGURATION_INTRO: &str = r".SH CONFIGURATION
The config file (TOML) is \fB/etc/autorepair/autorepair.toml\fR, or the file \fB--config\fR
names. Every key is optional; the defaults are shown. Unknown keys are errors (exit status 2).
\fBcontrib/autorepair.toml\fR in the source is an example with comments.
";

/// The config keys that are no family's, dotted, in the order the page lists them.
pub const CONFIG_KEYS: &[(&str, &str)] = &[
    (
        "lock_file",
        r"Lock file, as \fB--lock-file\fR. If not set: one per fleet (see \fBFILES\fR).",
    ),
    (
        "limits.max_down_nodes_per_group",
        r"More down (offline or drained) nodes than this in one node group at once is a mass failure there: nothing is written or started for its instances, but the bookkeeping of repairs under way. Also a share of the group's nodes, as a string: \fB\(dq40%\(dq\fR allows 40% of them, rounded down (as a Cluster API MachineHealthCheck's \fBmaxUnhealthy\fR).",
    ),
    (
        "limits.max_down_nodes",
        r"The same over the whole cluster: beyond it a pass writes and starts nothing. Also a share of the cluster's nodes (\fB\(dq40%\(dq\fR).",
    ),
    (
        "limits.max_domains_under_repair",
        r"Repairs run for at most this many failure domains (down nodes) at once; all the repairs of one domain start together. 0 starts nothing new.",
    ),
    (
        "limits.max_pending",
        r"Optional: at most this many repairs under way at once, whatever their domain (\fBrun --max-pending\fR).",
    ),
    (
        "limits.max_broken",
        r"Optional: if more instances than this need a repair at once, start none and write nothing (\fBrun --max-broken\fR).",
    ),
    (
        "limits.max_writes_per_pass",
        r"At most this many writes per pass, tag changes and submitted operations; the rest waits for the next pass. An instance's writes go together or wait together, in this order: repairs under way (their bookkeeping and next jobs), repair starts (four writes or more each: the pending tag, the jobs, the tag that records them, the removal of what they supersede), the rest, then the tags of the cluster and its groups. One exception, so that no repair under way stays pending forever: the first repair under way goes through whole even when its writes alone are more. So \fB0\fR starts no repair and changes nothing else, while repairs under way carry on, one per pass.",
    ),
    (
        "limits.result_retention",
        r"Success and enoperm results older than this are removed, unless a rate window (\fBmax_repair_rate\fR, \fBmax_repair_rate_per_group\fR) still counts them. Failure results never are.",
    ),
    (
        "limits.max_results",
        r"At most this many success and enoperm results are kept per instance, the newest.",
    ),
    (
        "limits.retry_interval",
        r"A repair whose job failed for lack of resources is retried this long after.",
    ),
    (
        "limits.max_repair_age",
        r"A repair still unfinished this long after it started is recorded as a failure.",
    ),
    (
        "limits.retries",
        r"A failed repair is repaired again up to this many times before its failures park the instance for a person; \fB0\fR parks it at the first failure.",
    ),
    (
        "limits.retry_backoff",
        r"How long after a failure the first retry waits; each next one waits twice as long.",
    ),
    (
        "limits.min_healthy",
        r"An instance healthy this long after a successful repair starts its count of failures afresh; broken again sooner, its failures still count.",
    ),
    (
        "limits.max_repair_rate",
        r#"Optional: at most this many failure domains (nodes) newly taken under repair in any window of this length, cluster-wide: \fB"2/1h"\fR, or a share of the nodes, \fB"5%/1h"\fR. A node already counted in the window is never held back; what waits says when room comes back."#,
    ),
    (
        "limits.max_repair_rate_per_group",
        r"Optional: the same in each node group.",
    ),
    (
        "limits.escalate",
        r"With \fBretries\fR, a retry after failures starts one level above the highest that failed in a row (a failed migrate is retried as a failover), as far as the policy allows; at the top, the level that failed again. Off by default: a retry repeats what the instance needs.",
    ),
    (
        "limits.storm_cooldown",
        r#"Optional: after a mass failure (more nodes down than \fBmax_down_nodes_per_group\fR in a group, or \fBmax_down_nodes\fR in the cluster), no new repair starts there until this long after it ended (\fB"30min"\fR). Read from the fleet: a node that came back within it counts as down until its return."#,
    ),
];

/// The exit codes.
pub const EXIT_STATUS: &str = r#".SH "EXIT STATUS"
.TP
.B 0
Success.
.TP
.B 1
The pass finished, but some action failed (the others were carried out); or \fBtags parse\fR or
\fBtags lint\fR found invalid tags; or \fBsimulate\fR found a violated rule; or
\fBsabakan validate-template\fR found the template invalid, or \fBsabakan generate\fR or
\fBupdate\fR cannot produce a configuration without a person (not enough healthy candidates in
sabakan, or the etcd safety rule).
.TP
.B 2
Usage or configuration error: a bad option or argument, an unreadable or invalid config file, no
fleet to work on, no user or password for the fleet's service, an unusable certificate file, an unknown instance or
object, or an admin command that does not apply (e.g. \fBresume\fR on an object that is not
suspended).
.TP
.B 3
The fleet could not be read or saved (the cluster or service did not answer or refused, the fleet
file is unreadable), or the metrics file or the report could not be written; or the sabakan that
\fBautorepair sabakan\fR asks did not answer, or answered with an error.
.TP
.B 4
Another run or an admin command holds the lock, or a command a killed pass started still runs (recorded in LOCK.command beside the lock); this one did not act. Harmless for a periodic
run: the next one carries on.
.TP
.B 5
\fBsabakan update --write\fR changed the file (with \fB--dry-run\fR: would change it); 0 is
unchanged. A failed apply command is 1, the file left as last applied.
.TP
.B 6
The fleet refused a write for want of write access (credentials that may read but not write):
the pass stopped at its first write, since every other
one would be refused alike. Nothing after it was sent.
.PP
\fBrun --loop\fR outlives a cluster that does not answer for a while: a pass that fails, or
finds the lock held, is logged and the next one tries again. With \fB--passes\fR it ends with the worst status of its
passes.
"#;

/// Before the families' variables.
pub const ENVIRONMENT_HEAD: &str = r".SH ENVIRONMENT
.TP
.B AUTOREPAIR_CONFIG
The config file, as \fB--config\fR (which overrides it). A file named this way must exist;
set but empty, it counts as unset.
";

/// After the families' variables.
pub const ENVIRONMENT_TAIL: &str = r".TP
.B RUST_LOG
The log filter, e.g. \fBdebug\fR or \fBwarn,autorepair=debug\fR. When set, it replaces
\fB--log\fR. Logs go to standard error; the plan and results go to standard output.
.TP
.B NO_COLOR
Any non-empty value turns colour off in the logs. Without it, logs are coloured only when
standard error is a terminal (never on their way to syslog or the journal).
";

/// Before the families' lock paths.
pub const FILES_HEAD: &str = r".SH FILES
.TP
.B /etc/autorepair/autorepair.toml
The config file, read when it exists and \fB--config\fR is not given (see \fBCONFIGURATION\fR).
.TP
\fIFLEET\fB.lock\fR";

/// After the families' lock paths, up to how they name them.
pub const FILES_LOCK: &str = r"
The lock file, one per fleet, unless \fB--lock-file\fR or \fBlock_file\fR name another: next to
the fleet file \fIFLEET\fR (symlinks resolved)";

/// After how the families name their locks, before the families' files.
pub const FILES_LOCK_TAIL: &str = r". Clusters watched from
one host never block each other; two runs on one cluster on one host never act at once. \fBrun\fR holds it while a pass
acts, never while \fB--loop\fR sleeps, so an admin command always gets through between two
passes; the admin commands hold it while they edit. The kernel releases it when the process
ends, so a killed run leaves no stale lock. The file itself stays.
";

/// After the families' files.
pub const FILES_TAIL: &str = r".TP
.B /var/lib/prometheus/node-exporter/autorepair.prom
A customary place for \fBrun --metrics-file\fR: the Prometheus node exporter's textfile
collector reads that directory.
.TP
\fB/usr/share/bash-completion/completions/autorepair\fR, \fB/usr/share/zsh/vendor-completions/_autorepair\fR, \fB/usr/share/fish/vendor_completions.d/autorepair.fish\fR
Shell completion (\fBcontrib/completions/\fR in the source): the commands, flags and repair
levels, and the names of the fleet's objects as the commands take them (\fBcluster\fR and the
scopes and targets of \fBCOMMANDS\fR; targets only where a command takes only a target). For the
names the script asks autorepair itself, which reads the fleet the words typed so far name (the
family flags, \fB--config\fR, the config file) as the command would: a fleet file always, a live
fleet only if it answers within 2 seconds. It writes nothing, takes no lock and
prints nothing when the fleet cannot be read.
";

/// Before the families' examples.
pub const EXAMPLES_HEAD: &str = r".SH EXAMPLES
Every five minutes from cron, in \fB/etc/cron.d/autorepair\fR (\fBcontrib/cron.d/autorepair\fR
and \fBcontrib/systemd/\fR in the source are complete versions):
.PP
.RS 4
.EX
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
*/5 * * * * root autorepair run --config /etc/autorepair/autorepair.toml
.EE
.RE
";

/// After the families' examples, before `sabakan`'s.
pub const EXAMPLES_TAIL: &str = r".PP
Metrics for Prometheus, and a long-running watcher instead of cron:
.PP
.RS 4
.EX
autorepair run --metrics-file /var/lib/prometheus/node-exporter/autorepair.prom
autorepair run --loop --interval 5m --log-json
.EE
.RE
";

/// The pages SEE ALSO lists after the families'.
pub const SEE_ALSO: &[(&str, &str)] = &[("cron", "8"), ("systemd.timer", "5")];
