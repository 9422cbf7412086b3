//! The man page's text of `autorepair sabakan`, the cluster configuration it writes from
//! sabakan's machines: its section and its examples.

/// The section, placed after the families' own.
pub const SECTION: &str = r#".SH "CLUSTER CONFIGURATION FROM SABAKAN"
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

/// Its examples, last on the page.
pub const EXAMPLES: &str = r".PP
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
";
