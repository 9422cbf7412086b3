//! The man page, `man/autorepair.8`. Its synopsis, command and option sections are generated
//! from the clap definitions (with clap_mangen), so they cannot drift from `--help`; the tag
//! language, states, repairs, exit codes, files and examples are written by hand below, and the
//! config keys' defaults come from the code.
//!
//! The test builds the page in memory and fails when it differs from the committed file.
//! Regenerate it with `AUTOREPAIR_REGEN_MAN=1 cargo test --test it man::` (see `man/README.md`).
//! The other tests check what a text cannot check by itself: every config key is described,
//! every option the hand-written text names exists, and every example parses.

use clap::{Arg, ArgAction, Command};
use clap_mangen::Man;
use clap_mangen::roff::{Inline, Roff, bold, italic, roman};
use serde_json::Value;
use std::collections::BTreeSet;

const PAGE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/man/autorepair.8");
const REGEN_VAR: &str = "AUTOREPAIR_REGEN_MAN";
/// What the roff crate writes before every piece clap_mangen renders: it defines `\*(Aq`.
const PREAMBLE: &str = ".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n";

// ---------------------------------------------------------------------------------------------
// The hand-written parts, in roff. Write a plain "-" and "'": `escape` turns them into "\-" and
// "\*(Aq" (the string the clap_mangen preamble defines) so options copy and paste correctly.
// Never start a line with "'" (a control line in roff).

const DESCRIPTION: &str = r#".PP
The fleet is one family's targets, what they run on and the scopes above them (Ganeti node
groups and the cluster; Machine sets, deployments and clusters; racks and the cluster), with all
their marks: Ganeti tags, Kubernetes annotations \fBautorepair.io/*\fR, sabakan labels
\fBautorepair.*\fR. Everything
autorepair knows between passes is in those marks: it can be killed at any moment, and the next
pass carries on where it stopped, with no repair started twice.
.PP
Administrators steer it with marks on the cluster, the scopes and the targets (see \fBTAG
LANGUAGE\fR for Ganeti's); the admin commands (\fBallow\fR, \fBsuspend\fR, \fBresume\fR,
\fBrequest\fR, \fBclear\fR) write those marks for them, and other tools may write a request
themselves. The Ganeti tags are the ones Ganeti's own \fBharep\fR(1) reads; do not run both on
one cluster.
.PP
The fleet comes from one of these sources, each a flag of its own (or a key of the config file):
.TP
.B Ganeti RAPI
\fB--rapi\fR \fIURL\fR (or \fBurl\fR in the \fB[rapi]\fR section of the config file) works on a
live cluster through Ganeti's remote API, with the user and password of a RAPI user.
Reading (\fBstatus\fR, \fBsnapshot\fR, \fBexplain\fR, \fBreport\fR, \fBrun --dry-run\fR) needs the \fBread\fR option,
for the query resource \fB/2/query/instance\fR; a user with no option is refused it (403) and
reads the slow \fB/2/instances?bulk=1\fR instead. Writing tags and submitting repairs (\fBrun\fR,
\fBsuspend\fR, \fBresume\fR, \fBallow\fR, \fBrequest\fR, \fBclear\fR) needs the \fBwrite\fR option.
Ganeti's certificate is given with \fB--rapi-ca\fR and pinned.
.TP
.B Ganeti fleet file
\fB--cluster\fR \fIFILE\fR (or \fBfleet_file\fR) works on a JSON file shaped like Ganeti's RAPI
answers, for demonstrations, tests and what-if questions. The file also simulates the cluster:
a job submitted in one pass finishes in a later one and takes effect, and the file's
\fBsimulation\fR section scripts failures. \fBautorepair snapshot\fR saves a live cluster to such
a file; \fBautorepair generate\fR makes synthetic ones of any size.
.TP
.B metal3
\fB--kube\fR works on the Cluster API Machines, Metal3Machines, BareMetalHosts and Nodes of a
management cluster through its API server (the kubeconfig's current context, or
\fB--kubeconfig\fR \fIFILE\fR), and fences a broken Machine by power-cycling its host.
\fB--kube-objects\fR \fIFILE\fR works on those objects as \fBkubectl get -o json\fR prints them,
and plays the baremetal-operator and the kubelets between passes.
.TP
.B sabakan machines
\fB--sabakan\fR \fIURL\fR reads sabakan's machines and writes their labels through its API;
\fB--sabakan-file\fR \fIFILE\fR works on the JSON of its machine list instead. The procedures
are a CKE cluster.yml's \fBrepair:\fR section (\fB--repair-config\fR), the limits CKE's
constraints (\fB--constraints\fR); drains go through the cluster's API (\fB--kubeconfig\fR) or
cordon a Nodes file (\fB--nodes\fR).
.PP
Run \fBautorepair run\fR every few minutes from \fBcron\fR(8) or a systemd timer (for Ganeti,
next to \fBganeti-watcher\fR(8)), or keep one \fBautorepair run --loop\fR running. On one host,
the lock keeps passes apart. Several replicas elect the one that acts on what the family already
has: Ganeti's cluster master role (\fBrun --only-on-master\fR on every master candidate), a
Kubernetes Lease for metal3 and machines (\fBrun --loop --leader-elect\fR). A Ganeti fleet file,
a metal3 objects file or a machines fleet without \fB--kubeconfig\fR has nothing to elect with:
run it on one host only.
\fBautorepair run --dry-run\fR, \fBstatus\fR and \fBexplain\fR show what it would do and why,
and change nothing; \fBreport --html\fR writes the same as one page a person can look at.
"#;

const GLOBAL_OPTIONS_INTRO: &str = r#"These options may be given before or after the command. Command-line options override the config
file.
"#;

const COMMANDS_INTRO: &str = r#"An \fIOBJECT\fR is \fIKIND\fR\fB/\fR\fINAME\fR or \fBcluster\fR, in the words of the fleet's family; a bare
name is a target. Ganeti: \fBcluster\fR, \fBgroup/\fR\fINAME\fR, \fBinstance/\fR\fINAME\fR (tags on
nodes have no effect, and the commands refuse them). metal3: \fBcluster/\fR\fINS\fR\fB/\fR\fINAME\fR,
\fBmachinedeployment/\fR, \fBmachineset/\fR or \fBcontrolplane/\fR\fINS\fR\fB/\fR\fINAME\fR, and
\fBmachine/\fR\fINS\fR\fB/\fR\fINAME\fR. machines: \fBcluster\fR, \fBrack/\fR\fIN\fR,
\fBmachine/\fR\fISERIAL\fR. A \fITYPE\fR is a level of the family's ladder, least destructive
first: Ganeti \fBfix-storage\fR, \fBmigrate\fR, \fBfailover\fR, \fBreinstall\fR; metal3
\fBdrain\fR, \fBpower-cycle\fR, \fBreprovision\fR; machines \fBcheck\fR, \fBstep-1\fR …
\fBstep-8\fR. A \fITIME\fR is RFC 3339 (\fB2026\-12\-01T00:00:00Z\fR) or Unix seconds, from 1970 up to
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
"#;

const TAG_LANGUAGE: &str = r#".SH "TAG LANGUAGE"
Autorepair reads and writes the Ganeti tags that start with the prefix
.BR ganeti:watcher:autorepair: .
Tags without it are never touched. In the forms below the prefix is left out. The repair types,
from least to most destructive, are
.BR fix-storage ,
.BR migrate ,
.B failover
and
.BR reinstall .
.TP
.I TYPE
On the cluster, a node group or an instance: repairs up to \fITYPE\fR are allowed there.
.TP
.BR suspend " or " suspend:
No repair starts there.
.TP
.BI suspend: EPOCH
No repair starts there until \fIEPOCH\fR. Once it is over, autorepair removes the tag.
.TP
.BI pending: TYPE : ID : EPOCH : JOBS
On an instance: repair \fIID\fR (a UUID) of type \fITYPE\fR, started at \fIEPOCH\fR, is under
way with the Ganeti jobs \fIJOBS\fR (job ids joined by \fB+\fR). Autorepair writes it before it
submits the first job, and gives every job the reason \fBautorepair:\fR\fIID\fR, so a pass that
was killed in between finds and adopts the jobs instead of submitting them again.
With an empty job list, written by \fBautorepair request\fR or by another tool, it is a once-off
request: one repair of this instance, up to \fITYPE\fR, whatever the policy says (but not while
the instance is suspended or failed).
.TP
.BI result: TYPE : ID : EPOCH : OUTCOME : JOBS
On an instance: repair \fIID\fR ended at \fIEPOCH\fR. \fIOUTCOME\fR is \fBsuccess\fR,
\fBfailure\fR, or \fBenoperm\fR: the instance needs a \fITYPE\fR repair that its policy does not
allow (written once, not every pass). Success and enoperm results are removed after
\fBresult_retention\fR or beyond \fBmax_results\fR; a failure result stays until a person runs
\fBautorepair clear\fR.
.PP
A Ganeti tag is at most 128 characters of letters, digits and \fB_ . + * / : @ -\fR.
Invalid autorepair tags are logged on every pass, listed by \fBautorepair tags lint\fR, and
otherwise ignored; \fBautorepair tags parse\fR explains single tags. The complete grammar, with
its test vectors, is \fBtag-grammar/autorepair.abnf\fR in the source.
.SS "Effective policy"
On one object, a permanent suspend wins; else the latest timed suspend that is not over yet;
else the \fIleast\fR destructive repair type among its policy tags.
.PP
Across objects the \fInearest\fR object that carries any policy or suspend tag wins: the
instance itself, then the node group of its primary node, then the cluster. So an instance
tagged \fBfailover\fR is repaired even while the cluster is suspended, by design; \fBautorepair
status\fR shows every instance's effective policy and the object it came from. With no such tag
on any of the three, no repair is allowed.
"#;

const STATES: &str = r#".SH STATES
Every instance is in one of these states, as its tags and nodes say when the pass reads them.
\fBautorepair status\fR lists them with a count per state, and in its \fBNEXT\fR column (the
\fBnext\fR and \fBblocked\fR fields of \fB--json\fR) what the pass does about each: start or
continue a repair, change tags, or wait, and why. \fBautorepair explain\fR gives the reasons for
one instance. Times are shown in RFC 3339, UTC; JSON keeps epochs.
.TP
.B healthy
Nothing to repair, and no repair under way.
.TP
.B suspended
Its effective policy is a suspend: no repair starts, requested or not, broken or not.
.TP
.B needs-repair
Broken, with no repair under way: a repair starts in this pass, or its policy does not allow
the repair it needs (an \fBenoperm\fR result records that; with no policy at all nothing is
written), no automatic repair is safe (it needs a person; see \fBREPAIRS\fR), or a limit holds
the repair back (see \fBSAFETY\fR).
.TP
.B pending
A pending tag names a repair under way (or a once-off request). Passes follow its jobs, submit
its next steps, and end it with a result tag.
.TP
.B failed
A \fBfailure\fR result parks the instance: nothing starts on it, requests included, until a
person has investigated and run \fBautorepair clear\fR.
"#;

const REPAIRS: &str = r#".SH REPAIRS
An instance is broken when one of its nodes is offline or drained; a node that is not
vm_capable counts as drained. What repairs it depends on its disk template and on which node
failed. The repair type in bold is what the effective policy must allow.
.SS drbd
.TP
primary offline
\fBfailover\fR: fail over to the secondary, then replace the disks of the dead node.
.TP
primary drained
\fBmigrate\fR: live migration to the secondary.
.TP
secondary offline or drained
\fBfix-storage\fR: replace-disks onto a new secondary. An instance whose nodes are both
drained first gets a new secondary, then a migration.
.TP
both nodes offline
\fBreinstall\fR: recreate the disks on new nodes, then reinstall (the data is lost).
.TP
primary offline, secondary drained
Left to a person: Ganeti will not fail over onto a drained node, and a reinstall would throw away
the only intact copy. Undrain the secondary and the failover can run.
.SS "diskless, sharedfile, rbd, ext, gluster, blockdev"
.TP
primary offline
\fBfailover\fR to a node the iallocator chooses.
.TP
primary drained
\fBmigrate\fR: live migration to a node the iallocator chooses.
.SS "plain, file"
.TP
primary offline
\fBreinstall\fR: recreate the disks on a new node, then reinstall (the data is lost).
.TP
primary drained
\fBfailover\fR: move the instance to another node (it is down while its disks are copied).
.PP
New nodes are chosen by the iallocator that the \fBiallocator\fR key names or, when it is empty,
by autorepair itself: the least loaded usable node of the instance's node group. An unknown disk template,
an instance whose node is missing from the cluster, or an operation the backend cannot run,
leaves the instance to a person. A job that failed for lack of resources is retried after
\fBretry_interval\fR, until the repair is \fBmax_repair_age\fR old; then it is a failure.
"#;

const SAFETY: &str = r#".SH SAFETY
These rules hold whatever the input, and the simulator (\fBautorepair simulate\fR) checks them
after every pass.
.IP 1. 4
Never a repair more destructive than the effective policy allows. A request allows its own
type, on its own instance.
.IP 2. 4
Nothing starts on a suspended or failed instance. With \fBretries\fR set, a failed instance is
repaired again after \fBretry_backoff\fR (doubled each time), and parked only once its repairs
failed more than \fBretries\fR times in a row. Limits count failure domains, the down
(offline or drained) nodes: one dead node is an ordinary failure, and all its instances are
repaired at once. More than \fBmax_down_nodes_per_group\fR down nodes in a node group, or more
than \fBmax_down_nodes\fR in the cluster, is a mass failure: there, a pass writes no tag and
starts no job, except the bookkeeping of repairs already under way, and \fBstatus\fR says which
limit tripped. Repairs run for at most \fBmax_domains_under_repair\fR domains at once, and a
pass makes at most \fBmax_writes_per_pass\fR writes (each a Ganeti job), but for the first repair
under way, which goes through whole so that none waits forever.
.IP 3. 4
Never a second repair for an instance that has one pending, and never the same job twice, even
when autorepair is killed between submitting a job and recording it.
.IP 4. 4
Tags without the prefix are never touched, and autorepair never removes a failure result by
itself.
.IP 5. 4
A bad tag, a failed job or a vanished job of one instance never stops the pass for the others.
An autorepair tag that cannot be read holds what it would govern until it is fixed: an
unreadable suspend suspends, an unreadable policy allows nothing, an unreadable pending tag
counts as a repair under way and an unreadable result parks the instance; \fBtags lint\fR
names it and the verb that lifts it.
.IP 6. 4
\fB--dry-run\fR, \fBstatus\fR and \fBexplain\fR show everything it would do, and every change
is logged with the object, the tag and the reason.
.IP 7. 4
Two runs never act at once: see the lock in \fBFILES\fR.
.IP 8. 4
Nothing it is pointed at is lost. Inputs must be regular files (a FIFO, a device or a directory
is refused at once; \fB/dev/null\fR reads as empty) of at most 1 GiB. A write goes through a
symlink to its file and writes a FIFO or \fB/dev/stdout\fR in place; an output option that
names one of the command's inputs is refused (exit 2); a fleet file someone replaced or edited
during a pass is not overwritten (exit 3; the next pass reads the new file); a fleet file with
several hard links is refused.
"#;

const SABAKAN: &str = r#".SH "CLUSTER CONFIGURATION FROM SABAKAN"
\fBautorepair sabakan\fR writes and maintains the cluster configuration (\fBcluster.yml\fR) of a
CKE Kubernetes cluster from a template and the machines sabakan knows, as CKE's sabakan
integration does (with template weights, \fBminimum-workers\fR, \fBmaximum-workers\fR and the
replacement of unhealthy control planes). \fBgenerate\fR and \fBupdate\fR print: give the
result to \fBckecli cluster set\fR. \fBupdate --write FILE\fR maintains FILE instead, once or
with \fB--loop\fR: at most one action a pass, FILE replaced only when it changes (the version
before kept as FILE.prev, the change in FILE.history, read by \fBsabakan history\fR), an
optional apply command after \fB--\fR, CKE's metrics with \fB--metrics\fR, the query variables
of \fBsabakan set-variables\fR and the switch of \fBsabakan enable\fR|\fBdisable\fR. The same
inputs always give the same file. While the apply command runs, its pid and start time are in
FILE.applying: a pass starts no apply while an earlier pass's command still runs (exit 4), and
SIGTERM waits for the command under way.
.PP
The template is a cluster.yml whose node entries have no address: exactly one with
\fBcontrol_plane: true\fR, and one or more worker templates. With two or more, each names its
machine role with the label \fBcke.cybozu.com/role\fR and may give its share of the workers with
\fBcke.cybozu.com/weight\fR (a number above 0, default 1). Everything but \fBnodes\fR is copied to
the output as written.
.PP
The machines come from \fB--machines\fR (sabakan's answer to the \fBsearchMachines\fR GraphQL
query, or its REST machine list) or live from \fB--sabakan\fR with CKE's query and its
\fB$having\fR/\fB$notHaving\fR variables (\fB--variables\fR). The constraints file takes CKE's
names: \fBcontrol-plane-count\fR (default 1), \fBminimum-workers\fR (1) and
\fBmaximum-workers\fR (0, no maximum). \fB--nodes\fR gives the Kubernetes Nodes (\fBkubectl get
nodes -o json\fR): a control plane with a taint it does not tolerate is replaced.
.PP
A new machine is scored (100 - machines already chosen in its rack) x 10, plus 1 to 3 for
more than 250, 500 and 1000 days before its retire date, minus 1 to 3 for as many days past
it; removal adds 1000 to a HEALTHY machine, and the lowest score goes. Equal scores go to the
machine whose serial sorts first. \fBgenerate\fR chooses \fBcontrol-plane-count\fR control
planes, then \fBminimum-workers\fR workers, from the HEALTHY machines. \fBupdate\fR applies the
first of these that applies, then fills up to the constraints:
.IP 1. 4
remove nodes whose machine is gone;
.IP 2. 4
add control planes up to \fBcontrol-plane-count\fR (unused machines first, then workers beyond
\fBminimum-workers\fR);
.IP 3. 4
demote control planes beyond it to workers;
.IP 4. 4
replace a control plane that is neither HEALTHY, UPDATING nor UNINITIALIZED, or is tainted;
.IP 5. 4
add workers while fewer than \fBminimum-workers\fR are HEALTHY (up to \fBmaximum-workers\fR);
.IP 6. 4
remove a worker RETIRED for more than 300 seconds;
.IP 7. 4
set the \fBcke.cybozu.com/state\fR taint of RETIRING, RETIRED and UNREACHABLE machines;
.IP 8. 4
re-render the nodes when the template or a machine's fields changed.
.PP
When none applies, \fBupdate\fR prints the current file unchanged. It never takes half or more
of the current control planes (etcd members) out at once: such an update fails (exit status 1)
for a person to decide; a lower \fBcontrol-plane-count\fR is reached in smaller steps.
\fB--json\fR prints the action, why, the changes and every candidate's score.
"#;

const CONFIGURATION_INTRO: &str = r#".SH CONFIGURATION
The config file (TOML) is \fB/etc/autorepair/autorepair.toml\fR, or the file \fB--config\fR
names. Every key is optional; the defaults are shown. Unknown keys are errors (exit status 2).
\fBcontrib/autorepair.toml\fR in the source is an example with comments.
"#;

/// Every config key, dotted (`limits.max_pending`), in the order the page lists them. The test
/// fails when the code has a key this list lacks, or the other way round; the default shown is
/// the one an empty config file gives.
const CONFIG_KEYS: &[(&str, &str)] = &[
    ("fleet_file", r"Fleet file to work on, as \fB--cluster\fR."),
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
        r"Repairs run for at most this many failure domains (down nodes) at once; all the repairs of one domain start together. 0 starts nothing new. For the machines family these three limits apply only when set: unset, CKE's constraints are the limits (docs/machines.md).",
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
        r"At most this many writes per pass, tag changes and submitted operations (each one a Ganeti job); the rest waits for the next pass. An instance's writes go together or wait together, in this order: repairs under way (their bookkeeping and next jobs), repair starts (four writes or more each: the pending tag, the jobs, the tag that records them, the removal of what they supersede), the rest, then the tags of the cluster and its groups. One exception, so that no repair under way stays pending forever: the first repair under way goes through whole even when its writes alone are more. So \fB0\fR starts no repair and changes nothing else, while repairs under way carry on, one per pass.",
    ),
    (
        "limits.result_retention",
        r"Success and enoperm results older than this are removed. Failure results never are.",
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
        r"A failed repair is repaired again up to this many times before its failures park the instance for a person; \fB0\fR parks it at the first failure. A Cluster API remediation request's own \fBretryLimit\fR wins over it.",
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
        r#"Optional: after a mass failure (more nodes down than \fBmax_down_nodes_per_group\fR in a group, or \fBmax_down_nodes\fR in the cluster), no new repair starts there until this long after it ended (\fB"30min"\fR). Read from the fleet: a node that came back within it counts as down until its return (Ganeti records a node's last change, not its return: any change of a node counts)."#,
    ),
    (
        "ganeti.iallocator",
        r#"The Ganeti iallocator that chooses new nodes. \fB""\fR: autorepair chooses the least loaded usable node of the instance's node group itself. A config file that sets it in \fB[limits]\fR, its old place, still works, with a warning to move it here."#,
    ),
    (
        "ganeti.only_on_master",
        r"\fBrun\fR acts only on the host that is the cluster's master, as \fB--only-on-master\fR: on every other node a pass reads and writes nothing, logs that it stands by, and exits 0, so cron can run it on every master candidate and it follows \fBgnt-cluster master-failover\fR. Each write asks again: a pass that loses the role stops before its next write. Needs \fB--rapi\fR; a fleet file has no master.",
    ),
    (
        "ganeti.ssconf_dir",
        r"Where this node's ssconf files are (\fBssconf_master_node\fR names the master); not set: \fB/var/lib/ganeti\fR. The environment variable \fBAUTOREPAIR_GANETI_SSCONF_DIR\fR wins.",
    ),
    (
        "ganeti.node_name",
        r"This host's node name, when neither its kernel name nor its fully qualified name is the name Ganeti knows it by.",
    ),
    (
        "rapi.url",
        r"The RAPI endpoint, e.g. \fBhttps://cluster.example.com:5080\fR, as \fB--rapi\fR.",
    ),
    ("rapi.user", r"The RAPI user, as \fB--rapi-user\fR."),
    (
        "rapi.password_file",
        r"The file holding that user's password, as \fB--rapi-password-file\fR.",
    ),
    (
        "rapi.ca_file",
        r"Ganeti's RAPI certificate (\fB/var/lib/ganeti/rapi.pem\fR on the master), as \fB--rapi-ca\fR. It is pinned: Ganeti's own self-signed certificate works, though it has no subjectAltName.",
    ),
    (
        "rapi.insecure",
        r"Do not verify the server's certificate, as \fB--insecure\fR. For tests only.",
    ),
    (
        "rapi.timeout",
        r"Timeout of one whole RAPI request. Connecting (TCP and the TLS handshake) has a timeout of its own, 10 s or this one if shorter; an error says which of the two fired. A request that failed for a passing reason (refused, timed out, HTTP 5xx) is retried at most 3 times within 20 s; once one gave up, the rest of the pass is not retried, and the error says how many attempts were made over how long.",
    ),
    (
        "metal3.node_unhealthy_after",
        r"A Node not Ready this long needs a power cycle (autorepair's own health check).",
    ),
    (
        "metal3.power_off_timeout",
        r"A host not seen off this long after its power cycle started: the cycle fails and the host stays on.",
    ),
    (
        "metal3.cycle_timeout",
        r"A power cycle not over (host on, Node back and Ready) this long after it started fails.",
    ),
    (
        "metal3.reboot_loop_window",
        r"A Machine power-cycled this recently is not power-cycled again: reprovisioned if the policy allows, else left to a person.",
    ),
    (
        "metal3.drain_timeout",
        r"A drain whose Pods are not all evicted after this long fails.",
    ),
    (
        "metal3.power_mode",
        r"\fBhard\fR cuts the power at once (fencing); \fBsoft\fR asks the OS first and can take minutes.",
    ),
    (
        "metal3.fencing",
        r"How a powered-off host's Node is fenced: \fBdelete-node\fR (backed up on its Machine, restored when it registers again), or \fBout-of-service-taint\fR (the Node stays, tainted \fBnode.kubernetes.io/out-of-service=nodeshutdown:NoExecute\fR until its host is on and it is Ready; Kubernetes 1.28 or later), as \fB--out-of-service-taint\fR.",
    ),
    (
        "machines.sabakan",
        r"A live sabakan's URL: the machines family, as \fB--sabakan\fR. One searchMachines query per pass, one REST call per label write.",
    ),
    (
        "machines.sabakan_file",
        r"A sabakan machines file instead (the JSON of GET /api/v1/machines), as \fB--sabakan-file\fR. Set one of the two.",
    ),
    (
        "machines.ca_file",
        r"A PEM file of a CA to trust for an https:// sabakan, besides the system's roots, as \fB--sabakan-ca\fR. The server is always verified.",
    ),
    ("machines.timeout", r"Per-request timeout for sabakan."),
    (
        "machines.repair_config",
        r"CKE's cluster.yml, or its repair: section alone, as \fB--repair-config\fR. Required for the machines family.",
    ),
    (
        "machines.constraints",
        r"CKE's constraints as a JSON object, as \fB--constraints\fR. Without it maximum-repair-queue-entries is 0 and no repair starts.",
    ),
    (
        "machines.nodes",
        r"The Kubernetes Nodes as \fBkubectl get nodes -o json\fR prints them, as \fB--nodes\fR (cordons written into the file).",
    ),
    (
        "machines.kubeconfig",
        r"Or the live cluster of this kubeconfig, as \fB--kubeconfig\fR: Node membership, and drains through the Eviction API by CKE's rules. Set nodes or kubeconfig, not both.",
    ),
    (
        "machines.kube_context",
        r"The kubeconfig's context, as \fB--kube-context\fR; not set: its current context.",
    ),
    (
        "machines.etcd_ca",
        r"CKE's etcd gate, as \fB--etcd-ca\fR: the CA of the cluster's etcd. With etcd_cert and etcd_key (all three, or none: the gate off), no repair step moves unless etcd, asked at each control plane of repair_config's nodes:, is good for repair as CKE decides.",
    ),
    (
        "machines.etcd_cert",
        r"The client certificate for etcd (PEM), as \fB--etcd-cert\fR.",
    ),
    (
        "machines.etcd_key",
        r"The client certificate's key for etcd (PEM), as \fB--etcd-key\fR.",
    ),
    (
        "machines.variables",
        r"The trigger's \fBhaving\fR and \fBnotHaving\fR, as \fBckecli sabakan set-variables\fR takes them (a table: \fB[machines.variables]\fR). Not set: CKE's, the UNHEALTHY and UNREACHABLE machines that are not boot servers. Set, a key left out is no condition (CKE sends it as null).",
    ),
];

const EXIT_STATUS: &str = r#".SH "EXIT STATUS"
.TP
.B 0
Success.
.TP
.B 1
The pass finished, but some action failed (the others were carried out); or \fBtags parse\fR or
\fBtags lint\fR found invalid tags; or \fBsimulate\fR found a violated rule; or
\fBsabakan validate-template\fR found the template invalid, or \fBsabakan generate\fR or
\fBupdate\fR cannot produce a configuration without a person (not enough healthy machines, or
the etcd safety rule).
.TP
.B 2
Usage or configuration error: a bad option or argument, an unreadable or invalid config file, no
fleet to work on, no RAPI user or password, an unusable certificate file, an unknown instance or
object, or an admin command that does not apply (e.g. \fBresume\fR on an object that is not
suspended).
.TP
.B 3
The fleet could not be read or saved (the cluster did not answer or refused, the fleet file is
unreadable), or the metrics file or the report could not be written; or sabakan (\fB--sabakan\fR) did not
answer, or answered with an error.
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
The fleet refused a write for want of write access (a RAPI user without the \fBwrite\fR option
in \fB/var/lib/ganeti/rapi/users\fR): the pass stopped at its first write, since every other
one would be refused alike. Nothing after it was sent.
.PP
\fBrun --loop\fR outlives a cluster that does not answer for a while: a pass that fails, or
finds the lock held, is logged and the next one tries again. With \fB--passes\fR it ends with the worst status of its
passes.
"#;

const ENVIRONMENT: &str = r#".SH ENVIRONMENT
.TP
.B AUTOREPAIR_CONFIG
The config file, as \fB--config\fR (which overrides it). A file named this way must exist;
set but empty, it counts as unset.
.TP
.B AUTOREPAIR_RAPI_PASSWORD
The RAPI password, when neither \fB--rapi-password-file\fR nor \fBpassword_file\fR names a
file. Read once, when the process starts: to rotate the password of \fBrun --loop\fR without a
restart, use a password file.
.TP
.B RUST_LOG
The log filter, e.g. \fBdebug\fR or \fBwarn,autorepair=debug\fR. When set, it replaces
\fB--log\fR. Logs go to standard error; the plan and results go to standard output.
.TP
.B NO_COLOR
Any non-empty value turns colour off in the logs. Without it, logs are coloured only when
standard error is a terminal (never on their way to syslog or the journal).
"#;

const FILES: &str = r#".SH FILES
.TP
.B /etc/autorepair/autorepair.toml
The config file, read when it exists and \fB--config\fR is not given (see \fBCONFIGURATION\fR).
.TP
\fIFLEET\fB.lock\fR, \fB/run/lock/autorepair-ganeti-\fR\fIUUID\fB.lock\fR, \fB/run/lock/autorepair-\fR\fIHOST\fB:\fR\fIPORT\fB.lock\fR
The lock file, one per fleet, unless \fB--lock-file\fR or \fBlock_file\fR name another: next to
the fleet file \fIFLEET\fR (symlinks resolved); for a Ganeti cluster over RAPI in \fB/run/lock\fR,
named after the cluster's uuid, which one \fBGET /2/info\fR reads as the lock is taken (so every
URL of one cluster finds the same lock; a run that cannot read it fails rather than guess); for
a sabakan server, after the host and port of its URL (443 if it has none). Clusters watched from
one host never block each other; two runs on one cluster on one host never act at once. \fBrun\fR holds it while a pass
acts, never while \fB--loop\fR sleeps, so an admin command always gets through between two
passes; the admin commands hold it while they edit. The kernel releases it when the process
ends, so a killed run leaves no stale lock. The file itself stays.
.TP
.B /etc/autorepair/rapi.password
A customary place for the RAPI password (\fB--rapi-password-file\fR, \fBpassword_file\fR): its
first line is the password. Make it readable by root only. It is read again by every pass of
\fBrun --loop\fR and every command, so a rotated password is used from the next pass on.
.TP
.B /var/lib/ganeti/rapi.pem
Ganeti's RAPI certificate on the master node: copy it to the host autorepair runs on and name
it with \fB--rapi-ca\fR. The RAPI users, lines \fINAME PASSWORD\fR [\fBread\fR|\fBwrite\fR], are in
\fB/var/lib/ganeti/rapi/users\fR on the master.
.TP
.B /var/lib/prometheus/node-exporter/autorepair.prom
A customary place for \fBrun --metrics-file\fR: the Prometheus node exporter's textfile
collector reads that directory.
.TP
\fB/usr/share/bash-completion/completions/autorepair\fR, \fB/usr/share/zsh/vendor-completions/_autorepair\fR, \fB/usr/share/fish/vendor_completions.d/autorepair.fish\fR
Shell completion (\fBcontrib/completions/\fR in the source): the commands, flags and repair
levels, and the names of the fleet's objects as the commands take them (\fBcluster\fR,
\fBgroup/\fR\fINAME\fR, \fBinstance/\fR\fINAME\fR, \fBmachine/\fR\fINS\fB/\fR\fINAME\fR,
\fBrack/\fR\fIN\fR...; targets only where a command takes only a target). For the names the script
asks autorepair itself, which reads the fleet the words typed so far name (the family flags,
\fB--config\fR, the config file) as the command would: a fleet file always, a live fleet (RAPI,
Kubernetes, sabakan) only if it answers within 2 seconds. It writes nothing, takes no lock and
prints nothing when the fleet cannot be read.
"#;

const EXAMPLES: &str = r#".SH EXAMPLES
Every five minutes from cron, in \fB/etc/cron.d/autorepair\fR (\fBcontrib/cron.d/autorepair\fR
and \fBcontrib/systemd/\fR in the source are complete versions):
.PP
.RS 4
.EX
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
*/5 * * * * root autorepair run --config /etc/autorepair/autorepair.toml
.EE
.RE
.PP
The connection in the config file:
.PP
.RS 4
.EX
[rapi]
url = "https://cluster.example.com:5080"
user = "autorepair"
password_file = "/etc/autorepair/rapi.password"
ca_file = "/etc/autorepair/rapi.pem"
.EE
.RE
.PP
or on the command line:
.PP
.RS 4
.EX
autorepair status --rapi https://cluster.example.com:5080 --rapi-user autorepair \e
    --rapi-password-file /etc/autorepair/rapi.password --rapi-ca /etc/autorepair/rapi.pem
.EE
.RE
.PP
Look before acting: what one pass would do, every instance's state and policy, the reasoning for
one instance, the bad tags.
.PP
.RS 4
.EX
autorepair run --dry-run
autorepair status
autorepair explain db1.example.com
autorepair tags lint
.EE
.RE
.PP
The same as one page to look at in a browser (self-contained: no script, nothing fetched):
the instances by state per node group, what is pending and why, the limiter's verdict and the
recent repairs:
.PP
.RS 4
.EX
autorepair report --html /var/www/autorepair/index.html
.EE
.RE
.PP
Allow migrations everywhere, failovers in node group \fBrack-a\fR, anything on one instance;
then drop that instance's own policy so it follows its group again:
.PP
.RS 4
.EX
autorepair allow migrate cluster
autorepair allow failover group/rack-a
autorepair allow reinstall instance/scratch1.example.com
autorepair allow none instance/scratch1.example.com
.EE
.RE
.PP
Suspend a node group for the two hours of a maintenance, an instance until a given time, the
whole cluster until further notice; and resume:
.PP
.RS 4
.EX
autorepair suspend --for 2h group/rack-b
autorepair suspend --until 1767225600 db1.example.com
autorepair suspend cluster
autorepair resume cluster
.EE
.RE
.PP
Ask for one repair of an instance, up to failover, whatever the policy says; clear a failure after
investigating it:
.PP
.RS 4
.EX
autorepair request failover web2.example.com
autorepair clear db1.example.com
.EE
.RE
.PP
sabakan machines (the machines family): CKE's repair procedures on a machines file, with the
repair entries in ckecli's words:
.PP
.RS 4
.EX
autorepair --sabakan-file machines.json --nodes nodes.json --repair-config cluster.yml \e
    --constraints constraints.json run
autorepair --sabakan-file machines.json --repair-config cluster.yml repair add unreachable qemu 10.69.0.4
autorepair --sabakan-file machines.json --repair-config cluster.yml repair list --json
autorepair --sabakan-file machines.json --repair-config cluster.yml repair delete --finished
autorepair --sabakan-file machines.json --repair-config cluster.yml repair reset-backoff
autorepair --sabakan-file machines.json --repair-config cluster.yml repair delete 3
autorepair --sabakan-file machines.json --repair-config cluster.yml repair wait --timeout 30m
autorepair --sabakan-file machines.json --repair-config cluster.yml repair is-enabled
autorepair --sabakan-file machines.json --repair-config cluster.yml repair disable
autorepair --sabakan-file machines.json --repair-config cluster.yml repair enable
autorepair --sabakan-file machines.json --repair-config cluster.yml auto-repair disable
autorepair --sabakan-file machines.json --repair-config cluster.yml auto-repair enable
autorepair --sabakan-file machines.json --repair-config cluster.yml auto-repair is-enabled
autorepair --sabakan-file machines.json --repair-config cluster.yml auto-repair set-variables query.json
autorepair --sabakan-file machines.json --repair-config cluster.yml auto-repair get-variables
.EE
.RE
.PP
What a tag means, as JSON:
.PP
.RS 4
.EX
autorepair tags parse --json ganeti:watcher:autorepair:suspend:1767225600
.EE
.RE
.PP
What-if on a copy of the live cluster: save it, see what the next passes would do, then let
100 chaos scenarios loose on it (neither touches the cluster):
.PP
.RS 4
.EX
autorepair snapshot --output /tmp/fleet.json
autorepair run --cluster /tmp/fleet.json --passes 20
autorepair simulate --cluster /tmp/fleet.json --scenarios 100
.EE
.RE
.PP
A synthetic fleet, for benchmarks and demonstrations:
.PP
.RS 4
.EX
autorepair generate --instances 100000 --seed 7 --output /tmp/big.json
.EE
.RE
.PP
Metrics for Prometheus, and a long-running watcher instead of cron:
.PP
.RS 4
.EX
autorepair run --metrics-file /var/lib/prometheus/node-exporter/autorepair.prom
autorepair run --loop --interval 5m --log-json
.EE
.RE
.PP
A CKE cluster configuration from sabakan: check the template, generate the configuration, then
keep it up to date (from cron, or by hand), with the reasons and scores as JSON:
.PP
.RS 4
.EX
autorepair sabakan validate-template template.yml
autorepair sabakan generate --template template.yml --constraints constraints.json \e
    --sabakan http://sabakan.example.com:10080 > cluster.yml
autorepair sabakan update --template template.yml --constraints constraints.json \e
    --machines machines.json --current cluster.yml --nodes nodes.json --json
.EE
.RE
.PP
Or maintain the file, as CKE's sabakan integration does, and apply each change:
.PP
.RS 4
.EX
autorepair sabakan set-variables /etc/cke/cluster.yml variables.json
autorepair sabakan get-variables /etc/cke/cluster.yml
autorepair sabakan update --template template.yml --constraints constraints.json \e
    --sabakan http://sabakan.example.com:10080 --write /etc/cke/cluster.yml \e
    --metrics /var/lib/prometheus/node-exporter/cke-sabakan.prom \e
    --loop --interval 1m -- ckecli cluster set
autorepair sabakan history /etc/cke/cluster.yml
autorepair sabakan disable /etc/cke/cluster.yml
autorepair sabakan is-enabled /etc/cke/cluster.yml
autorepair sabakan enable /etc/cke/cluster.yml
.EE
.RE
"#;

const SEE_ALSO: &str = r#".SH "SEE ALSO"
.BR ganeti (7),
.BR ganeti-watcher (8),
.BR gnt-instance (8),
.BR gnt-node (8),
.BR harep (1),
.BR cron (8),
.BR systemd.timer (5)
"#;

// ---------------------------------------------------------------------------------------------
// Building the page.

/// A command that takes no further subcommand, with the words that name it (`["tags", "parse"]`).
struct Leaf {
    words: Vec<String>,
    cmd: Command,
}

fn leaves(cmd: &Command, words: &[String], out: &mut Vec<Leaf>) {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let mut words = words.to_vec();
        words.push(sub.get_name().to_owned());
        if sub.has_subcommands() {
            leaves(sub, &words, out);
        } else {
            // Built alone, from the unbuilt tree: the global options stay in their own section
            // and are not repeated under every command.
            let mut cmd = sub
                .clone()
                .disable_help_flag(true)
                .bin_name(format!("autorepair {}", words.join(" ")));
            cmd.build();
            out.push(Leaf { words, cmd });
        }
    }
}

fn all_leaves() -> Vec<Leaf> {
    let mut out = Vec::new();
    leaves(
        &autorepair::cli::command(autorepair::FAMILIES),
        &[],
        &mut out,
    );
    out
}

/// Renders with clap_mangen and drops the roff preamble it writes before every piece.
fn piece(render: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> String {
    let mut buf = Vec::new();
    render(&mut buf).expect("rendering to memory cannot fail");
    let text = String::from_utf8(buf).expect("clap_mangen writes UTF-8");
    text.strip_prefix(PREAMBLE).unwrap_or(&text).to_owned()
}

fn roff_text(line: impl Into<Vec<Inline>>) -> String {
    let mut r = Roff::new();
    r.text(line);
    r.to_roff()
}

fn takes_value(arg: &Arg) -> bool {
    arg.get_num_args().is_some_and(|n| n.takes_values())
}

fn value_name(arg: &Arg) -> String {
    arg.get_value_names()
        .and_then(|v| v.first())
        .map_or_else(|| arg.get_id().as_str().to_uppercase(), |v| v.to_string())
}

/// One synopsis, `autorepair [global options] run [--dry-run] [--now EPOCH] …`, in a .SY block
/// (lines that wrap are indented past the program name).
fn synopsis(leaf: &Leaf) -> String {
    let mut line = vec![roman("["), italic("global options"), roman("]")];
    for w in &leaf.words {
        line.push(roman(" "));
        line.push(bold(w.as_str()));
    }
    let args: Vec<&Arg> = leaf
        .cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .collect();
    for arg in args.iter().filter(|a| !a.is_positional()) {
        let Some(long) = arg.get_long() else { continue };
        let (open, close) = if arg.is_required_set() {
            ("", "")
        } else {
            ("[", "]")
        };
        line.push(roman(format!(" {open}")));
        line.push(bold(format!("--{long}")));
        if takes_value(arg) {
            line.push(roman(" "));
            line.push(italic(value_name(arg)));
        }
        line.push(roman(close));
    }
    for arg in args.iter().filter(|a| a.is_positional()) {
        let many = matches!(arg.get_action(), ArgAction::Append);
        let (open, close) = if arg.is_required_set() {
            ("", "")
        } else {
            ("[", "]")
        };
        line.push(roman(format!(" {open}")));
        line.push(italic(value_name(arg)));
        line.push(roman(format!("{}{close}", if many { "..." } else { "" })));
    }
    format!(".SY autorepair\n{}.YS\n", roff_text(line))
}

/// The hand-written roff, with "-" and "'" escaped in text and in macro arguments.
fn escape(roff: &str) -> String {
    let mut out = String::with_capacity(roff.len() + roff.len() / 8);
    let mut prev = '\n';
    for c in roff.chars() {
        match c {
            '-' if prev != '\\' => out.push_str(r"\-"),
            '\'' if prev != '\n' => out.push_str(r"\*(Aq"),
            '\'' => {
                panic!("a hand-written line starts with \"'\": roff reads it as a control line")
            }
            c => out.push(c),
        }
        prev = c;
    }
    out
}

fn config_defaults() -> Value {
    autorepair::face::registry::config_defaults(autorepair::FAMILIES)
}

/// Dotted paths of every leaf key of the config, in the order serde_json lists them.
fn config_paths(value: &Value, prefix: &str, out: &mut Vec<String>) {
    if let Value::Object(map) = value {
        for (k, v) in map {
            let path = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            if v.is_object() {
                config_paths(v, &path, out);
            } else {
                out.push(path);
            }
        }
    }
}

fn lookup<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(value, |v, k| v.get(k))
}

fn toml_value(v: &Value) -> String {
    match v {
        Value::Null => "not set".to_owned(),
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

fn configuration() -> String {
    let defaults = config_defaults();
    let mut out = escape(CONFIGURATION_INTRO);
    let mut table = "";
    for (path, text) in CONFIG_KEYS {
        let (section, key) = path.rsplit_once('.').unwrap_or(("", path));
        if section != table {
            table = section;
            out.push_str(&format!(".SS \"[{section}]\"\n"));
        }
        let default = lookup(&defaults, path).map_or("?".to_owned(), toml_value);
        out.push_str(".TP\n");
        out.push_str(&roff_text([bold(key), roman(" = "), italic(default)]));
        out.push_str(&escape(&format!("{text}\n")));
    }
    out
}

/// The whole page.
fn page() -> String {
    let cli = autorepair::cli::command(autorepair::FAMILIES);
    let version = cli.get_version().unwrap_or_default().to_owned();
    let man = Man::new(cli.clone()).section("8");
    let leaves = all_leaves();
    let mut out = String::new();

    out.push_str(
        ".\\\" Generated by tests/it/man.rs from the clap definitions and the text in it: do not edit.\n\
         .\\\" Regenerate: AUTOREPAIR_REGEN_MAN=1 cargo test --test it man:: (see man/README.md).\n",
    );
    // The roff preamble once (it defines the \*(Aq the pieces use), and our own .TH:
    // clap_mangen's writes an empty date as no argument at all.
    out.push_str(PREAMBLE);
    out.push_str(&format!(".TH AUTOREPAIR 8 \"\" \"autorepair {version}\"\n"));
    out.push_str(&piece(|w| man.render_name_section(w)));

    out.push_str(".SH SYNOPSIS\n");
    for leaf in &leaves {
        out.push_str(&synopsis(leaf));
    }

    out.push_str(&piece(|w| man.render_description_section(w)));
    out.push_str(&escape(DESCRIPTION));

    let globals = piece(|w| man.render_options_section(w));
    out.push_str(".SH \"GLOBAL OPTIONS\"\n");
    out.push_str(&escape(GLOBAL_OPTIONS_INTRO));
    out.push_str(globals.strip_prefix(".SH OPTIONS\n").unwrap_or(&globals));

    out.push_str(".SH COMMANDS\n");
    out.push_str(&escape(COMMANDS_INTRO));
    for leaf in &leaves {
        let sub = Man::new(leaf.cmd.clone());
        out.push_str(&format!(".SS \"autorepair {}\"\n", leaf.words.join(" ")));
        out.push_str(&synopsis(leaf));
        let about = piece(|w| sub.render_description_section(w));
        out.push_str(".PP\n");
        out.push_str(about.strip_prefix(".SH DESCRIPTION\n").unwrap_or(&about));
        let options = piece(|w| sub.render_options_section(w));
        out.push_str(options.strip_prefix(".SH OPTIONS\n").unwrap_or(&options));
    }

    for section in [TAG_LANGUAGE, STATES, REPAIRS, SAFETY, SABAKAN] {
        out.push_str(&escape(section));
    }
    out.push_str(&configuration());
    for section in [EXIT_STATUS, ENVIRONMENT, FILES, EXAMPLES, SEE_ALSO] {
        out.push_str(&escape(section));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The tests.

#[test]
fn man_page_is_up_to_date() {
    let fresh = page();
    if std::env::var_os(REGEN_VAR).is_some_and(|v| v == "1") {
        std::fs::write(PAGE, &fresh).expect("cannot write man/autorepair.8");
        return;
    }
    let committed = std::fs::read_to_string(PAGE).unwrap_or_default();
    if committed != fresh {
        let line = committed
            .lines()
            .zip(fresh.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(committed.lines().count().min(fresh.lines().count()));
        panic!(
            "man/autorepair.8 is out of date (first difference at line {}): regenerate it with\n\
             \n    {REGEN_VAR}=1 cargo test --test it man::\n\nand review the diff.",
            line + 1
        );
    }
}

#[test]
fn every_config_key_is_described() {
    let mut in_code = Vec::new();
    config_paths(&config_defaults(), "", &mut in_code);
    let in_code: BTreeSet<&str> = in_code.iter().map(String::as_str).collect();
    let described: BTreeSet<&str> = CONFIG_KEYS.iter().map(|(k, _)| *k).collect();
    let missing: Vec<_> = in_code.difference(&described).collect();
    let stale: Vec<_> = described.difference(&in_code).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "CONFIG_KEYS in tests/it/man.rs does not match the config: add {missing:?}, remove {stale:?}"
    );
}

/// Every long option and subcommand anywhere in the clap tree.
fn known_words() -> BTreeSet<String> {
    fn walk(cmd: &Command, out: &mut BTreeSet<String>) {
        for arg in cmd.get_arguments() {
            if let Some(long) = arg.get_long() {
                out.insert(format!("--{long}"));
            }
        }
        for sub in cmd.get_subcommands() {
            out.insert(sub.get_name().to_owned());
            walk(sub, out);
        }
    }
    let mut out = BTreeSet::new();
    let mut cmd = autorepair::cli::command(autorepair::FAMILIES);
    cmd.build();
    walk(&cmd, &mut out);
    out
}

fn hand_written() -> Vec<&'static str> {
    let mut all = vec![
        DESCRIPTION,
        GLOBAL_OPTIONS_INTRO,
        COMMANDS_INTRO,
        TAG_LANGUAGE,
        STATES,
        REPAIRS,
        SAFETY,
        SABAKAN,
        CONFIGURATION_INTRO,
        EXIT_STATUS,
        ENVIRONMENT,
        FILES,
        EXAMPLES,
        SEE_ALSO,
    ];
    all.extend(CONFIG_KEYS.iter().map(|(_, text)| *text));
    all
}

#[test]
fn every_option_the_text_names_exists() {
    let known = known_words();
    let mut unknown = BTreeSet::new();
    for text in hand_written() {
        for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
            let name = word.trim_end_matches('-');
            if name.len() > 2 && name.starts_with("--") && !known.contains(name) {
                unknown.insert(name.to_owned());
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "the hand-written text in tests/it/man.rs names options clap does not know: {unknown:?}"
    );
}

/// The autorepair command lines in a text: from the word `autorepair` (or a path ending in
/// `/autorepair`) up to the first shell operator or comment.
fn command_lines(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    // Continuation lines, in roff (`\e`) or in a shell.
    let text = text.replace("\\e\n", " ").replace("\\\n", " ");
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with('#') || line.starts_with('.') {
            continue;
        }
        let line = line.strip_prefix("ExecStart=").unwrap_or(line);
        let words: Vec<&str> = line.split_whitespace().collect();
        // The program word followed by a command (not `[ -x /usr/local/bin/autorepair ]`).
        let Some(start) = (0..words.len().saturating_sub(1)).find(|&i| {
            (words[i] == "autorepair" || words[i].ends_with("/autorepair"))
                && words[i + 1].starts_with(|c: char| c.is_ascii_lowercase() || c == '-')
        }) else {
            continue;
        };
        let args: Vec<String> = words[start + 1..]
            .iter()
            .take_while(|w| {
                !matches!(**w, "|" | "||" | "&&" | ";" | "2>&1" | "#") && !w.starts_with('>')
            })
            .map(|w| (*w).to_owned())
            .collect();
        out.push(args);
    }
    out
}

/// Parses each command line with clap; returns the errors, and the leaf commands covered.
fn check_lines(lines: &[Vec<String>], covered: &mut BTreeSet<String>) -> Vec<String> {
    let mut errors = Vec::new();
    for args in lines {
        let argv = std::iter::once("autorepair".to_owned()).chain(args.iter().cloned());
        match autorepair::cli::command(autorepair::FAMILIES).try_get_matches_from(argv) {
            Ok(m) => {
                let mut words = Vec::new();
                let mut m = &m;
                while let Some((name, sub)) = m.subcommand() {
                    words.push(name.to_owned());
                    m = sub;
                }
                covered.insert(words.join(" "));
            }
            Err(e) => errors.push(format!("autorepair {}: {}", args.join(" "), e.kind())),
        }
    }
    errors
}

#[test]
fn every_example_parses_and_every_command_has_one() {
    let mut covered = BTreeSet::new();
    let mut errors = check_lines(&command_lines(EXAMPLES), &mut covered);
    let leaves: BTreeSet<String> = all_leaves().iter().map(|l| l.words.join(" ")).collect();
    let without: Vec<_> = leaves.difference(&covered).collect();
    if !without.is_empty() {
        errors.push(format!(
            "commands without an example in EXAMPLES: {without:?}"
        ));
    }
    assert!(
        errors.is_empty(),
        "tests/it/man.rs EXAMPLES:\n{}",
        errors.join("\n")
    );
}

#[test]
fn the_cron_and_systemd_command_lines_parse() {
    let mut covered = BTreeSet::new();
    let mut errors = Vec::new();
    for file in [
        "contrib/cron.d/autorepair",
        "contrib/systemd/autorepair.service",
        "contrib/cron.d/autorepair-sabakan",
        "contrib/systemd/autorepair-sabakan.service",
    ] {
        let path = format!("{}/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let lines = command_lines(&text);
        assert!(!lines.is_empty(), "{file} runs no autorepair command");
        errors.extend(
            check_lines(&lines, &mut covered)
                .into_iter()
                .map(|e| format!("{file}: {e}")),
        );
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// `contrib/autorepair.toml` says it lists every key: each key of the config stands in it, in
/// its section, set or commented out (`[metal3] fencing` was missing).
#[test]
fn the_example_config_lists_every_key() {
    let example = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/autorepair.toml"),
    )
    .unwrap();
    // Each key, as "section.key" (or "key" before any section), from the lines that set one.
    let mut listed = BTreeSet::new();
    let mut section = String::new();
    for line in example.lines() {
        let line = line.trim_start_matches('#').trim();
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.to_owned();
            // A table key unset by default (`[machines.variables]`) is listed as its section.
            listed.insert(section.clone());
        } else if let Some((key, _)) = line.split_once(" = ") {
            let key = key.trim();
            if !key.is_empty() && key.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
                listed.insert(if section.is_empty() {
                    key.to_owned()
                } else {
                    format!("{section}.{key}")
                });
            }
        }
    }
    let mut in_code = Vec::new();
    config_paths(&config_defaults(), "", &mut in_code);
    let missing: Vec<&String> = in_code.iter().filter(|k| !listed.contains(*k)).collect();
    assert!(
        missing.is_empty(),
        "contrib/autorepair.toml lacks {missing:?}"
    );
}
