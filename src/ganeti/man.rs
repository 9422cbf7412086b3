//! Ganeti's part of the man page: its fleet sources, its objects and ladder, its tag
//! language, states, repairs and safety rules, and its config keys, files and examples.

use crate::plug::man::ManPage;

pub const PAGE: ManPage = ManPage {
    scopes: r"Ganeti node
groups and the cluster",
    marks: r"Ganeti tags",
    sources: SOURCES,
    objects: r"Ganeti: \fBcluster\fR, \fBgroup/\fR\fINAME\fR, \fBinstance/\fR\fINAME\fR (tags on
nodes have no effect, and the commands refuse them).",
    ladder: r"Ganeti \fBfix-storage\fR, \fBmigrate\fR, \fBfailover\fR, \fBreinstall\fR",
    steering: r"Ganeti's marks are its tags (see \fBTAG LANGUAGE\fR), the ones Ganeti's own
\fBharep\fR(1) reads; do not run both on one cluster.",
    replicas: r"Ganeti: run it next to \fBganeti-watcher\fR(8); replicas elect by the cluster
master role (\fBrun --only-on-master\fR on every master candidate); a fleet file has nothing to
elect with.",
    lock_path: r"\fB/run/lock/autorepair-ganeti-\fR\fIUUID\fB.lock\fR",
    lock: r"for a Ganeti cluster over RAPI in \fB/run/lock\fR,
named after the cluster's uuid, which one \fBGET /2/info\fR reads as the lock is taken (so every
URL of one cluster finds the same lock; a run that cannot read it fails rather than guess)",
    notes: &[
        (
            "limits.max_writes_per_pass",
            r"On a Ganeti cluster each submitted operation is one job.",
        ),
        (
            "limits.storm_cooldown",
            r"Ganeti records a node's last change, not its return: any change of a node counts.",
        ),
    ],
    sections: &[TAG_LANGUAGE, STATES, REPAIRS, SAFETY],
    config_keys: CONFIG_KEYS,
    environment: ENVIRONMENT,
    files: FILES,
    examples: EXAMPLES,
    see_also: &[
        ("ganeti", "7"),
        ("ganeti-watcher", "8"),
        ("gnt-instance", "8"),
        ("gnt-node", "8"),
        ("harep", "1"),
    ],
};

const SOURCES: &str = r".TP
.B Ganeti RAPI
\fB--rapi\fR \fIURL\fR (or \fBurl\fR in the \fB[rapi]\fR section of the config file) works on a
live cluster through Ganeti's remote API, with the user and password of a RAPI user.
Reading (\fBstatus\fR, \fBsnapshot\fR, \fBexplain\fR, \fBreport\fR, \fBrun --dry-run\fR) needs the \fBread\fR option,
for the query resource \fB/2/query/instance\fR; a user with no option is refused it (403) and
reads the slow \fB/2/instances?bulk=1\fR instead. Writing tags and submitting repairs (\fBrun\fR,
\fBsuspend\fR, \fBresume\fR, \fBallow\fR, \fBrequest\fR, \fBclear\fR) needs the \fBwrite\fR option:
without it a pass stops at its first write (exit status 6).
Ganeti's certificate is given with \fB--rapi-ca\fR and pinned.
.TP
.B Ganeti fleet file
\fB--cluster\fR \fIFILE\fR (or \fBfleet_file\fR) works on a JSON file shaped like Ganeti's RAPI
answers, for demonstrations, tests and what-if questions. The file also simulates the cluster:
a job submitted in one pass finishes in a later one and takes effect, and the file's
\fBsimulation\fR section scripts failures. \fBautorepair snapshot\fR saves a live cluster to such
a file; \fBautorepair generate\fR makes synthetic ones of any size.
";

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
\fBresult_retention\fR (or the longest rate window, when longer) or beyond
\fBmax_results\fR; a failure result stays until a person runs
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

const STATES: &str = r".SH STATES
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
";

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

const SAFETY: &str = r".SH SAFETY
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
";

/// Every key of the family's config (`fleet_file`, `[ganeti]`, `[rapi]`).
const CONFIG_KEYS: &[(&str, &str)] = &[
    ("fleet_file", r"Fleet file to work on, as \fB--cluster\fR."),
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
];

const ENVIRONMENT: &str = r".TP
.B AUTOREPAIR_RAPI_PASSWORD
The RAPI password, when neither \fB--rapi-password-file\fR nor \fBpassword_file\fR names a
file. Read once, when the process starts: to rotate the password of \fBrun --loop\fR without a
restart, use a password file.
";

const FILES: &str = r".TP
.B /etc/autorepair/rapi.password
A customary place for the RAPI password (\fB--rapi-password-file\fR, \fBpassword_file\fR): its
first line is the password. Make it readable by root only. It is read again by every pass of
\fBrun --loop\fR and every command, so a rotated password is used from the next pass on.
.TP
.B /var/lib/ganeti/rapi.pem
Ganeti's RAPI certificate on the master node: copy it to the host autorepair runs on and name
it with \fB--rapi-ca\fR. The RAPI users, lines \fINAME PASSWORD\fR [\fBread\fR|\fBwrite\fR], are in
\fB/var/lib/ganeti/rapi/users\fR on the master.
";

const EXAMPLES: &str = r#".PP
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
"#;
