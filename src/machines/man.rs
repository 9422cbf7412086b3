//! The machines family's part of the man page: its fleet sources, objects and ladder, its
//! config keys and its examples.

use crate::plug::man::ManPage;

pub const PAGE: ManPage = ManPage {
    scopes: r"racks and the cluster",
    marks: r"sabakan labels
\fBautorepair.*\fR",
    sources: SOURCES,
    objects: r"machines: \fBcluster\fR, \fBrack/\fR\fIN\fR,
\fBmachine/\fR\fISERIAL\fR.",
    ladder: r"machines \fBcheck\fR, \fBstep-1\fR …
\fBstep-8\fR",
    steering: "",
    replicas: r"machines: replicas elect with a Kubernetes Lease in the Nodes' cluster
(\fBrun --loop --leader-elect\fR with \fB--kubeconfig\fR); without \fB--kubeconfig\fR a machines
fleet has nothing to elect with.",
    lock_path: r"\fB/run/lock/autorepair-\fR\fIHOST\fB:\fR\fIPORT\fB.lock\fR",
    lock: r"for a sabakan server, after the host and port of its URL (443 if it has none)",
    notes: &[(
        "limits.max_domains_under_repair",
        r"For the machines family these three limits apply only when set: unset, CKE's constraints are the limits (docs/machines.md).",
    )],
    sections: &[],
    config_keys: CONFIG_KEYS,
    environment: "",
    files: "",
    examples: EXAMPLES,
    see_also: &[],
};

const SOURCES: &str = r".TP
.B sabakan machines
\fB--sabakan\fR \fIURL\fR reads sabakan's machines and writes their labels through its API;
\fB--sabakan-file\fR \fIFILE\fR works on the JSON of its machine list instead. The procedures
are a CKE cluster.yml's \fBrepair:\fR section (\fB--repair-config\fR), the limits CKE's
constraints (\fB--constraints\fR); drains go through the cluster's API (\fB--kubeconfig\fR) or
cordon a Nodes file (\fB--nodes\fR).
";

/// Every key of the family's config (`[machines]`).
const CONFIG_KEYS: &[(&str, &str)] = &[
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

const EXAMPLES: &str = r".PP
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
";
