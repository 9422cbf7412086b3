//! metal3's part of the man page: its fleet sources, objects and ladder, and its config keys.

use crate::plug::man::ManPage;

pub const PAGE: ManPage = ManPage {
    scopes: r"Machine sets, deployments and clusters",
    marks: r"Kubernetes annotations \fBautorepair.io/*\fR",
    sources: SOURCES,
    objects: r"metal3: \fBcluster/\fR\fINS\fR\fB/\fR\fINAME\fR,
\fBmachinedeployment/\fR, \fBmachineset/\fR or \fBcontrolplane/\fR\fINS\fR\fB/\fR\fINAME\fR, and
\fBmachine/\fR\fINS\fR\fB/\fR\fINAME\fR.",
    ladder: r"metal3
\fBdrain\fR, \fBpower-cycle\fR, \fBreprovision\fR",
    steering: "",
    replicas: r"metal3: replicas elect with a Kubernetes Lease (\fBrun --loop
--leader-elect\fR); an objects file has nothing to elect with.",
    lock_path: r"\fB/run/lock/autorepair-kube.lock\fR",
    lock: r"for a management cluster (\fB--kube\fR), \fBautorepair-kube.lock\fR, one per host",
    notes: &[(
        "limits.retries",
        r"A Cluster API remediation request's own \fBretryLimit\fR wins over it.",
    )],
    sections: &[],
    config_keys: CONFIG_KEYS,
    environment: "",
    files: "",
    examples: "",
    see_also: &[],
};

const SOURCES: &str = r".TP
.B metal3
\fB--kube\fR works on the Cluster API Machines, Metal3Machines, BareMetalHosts and Nodes of a
management cluster through its API server (the kubeconfig's current context, or
\fB--kubeconfig\fR \fIFILE\fR), and fences a broken Machine by power-cycling its host.
\fB--kube-objects\fR \fIFILE\fR works on those objects as \fBkubectl get -o json\fR prints them,
and plays the baremetal-operator and the kubelets between passes.
";

/// Every key of the family's config (`[metal3]`).
const CONFIG_KEYS: &[(&str, &str)] = &[
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
];
