//! A family's words in the command line's help and errors: the face writes every help once, for
//! whatever families are registered, and takes what only a family can say from
//! [`FamilyFace::HELP`](super::FamilyFace::HELP), family by family in the order they are
//! registered. Plain text (no roff, no markdown), each piece a phrase the face places in its
//! own sentence: a family whose piece is empty or `None` is left out there.

/// One family's words in the help. Every field may be empty (the family says nothing there).
#[derive(Debug, Clone, Copy)]
pub struct Help {
    /// The scopes above its targets, as an admin names them (`group/NAME`).
    pub scopes: &'static [&'static str],
    /// Its targets as KIND/NAME (`instance/NAME`).
    pub targets: &'static [&'static str],
    /// A target as a command that takes one names it ("an instance's full name").
    pub target: &'static str,
    /// Its marks, as `tags parse` reads them ("Ganeti tags").
    pub marks: &'static str,
    /// The lock of a fleet it reaches over the network, under /run/lock, when no lock is named
    /// ("autorepair-kube.lock for --kube").
    pub lock: Option<&'static str>,
    /// The Kubernetes cluster `--kubeconfig` names for it ("the management cluster of --kube
    /// (metal3)"); `None`: it reads no kubeconfig.
    pub kubeconfig: Option<&'static str>,
    /// Where it runs on a live Kubernetes cluster, in which `run --loop` elects a leader with
    /// a Lease and stops cleanly on SIGTERM ("--kube (metal3)"); `None`: it has none.
    pub live: Option<&'static str>,
    /// The flag with which `run --loop` watches its fleet's objects for changes (`--kube`).
    pub watched: Option<&'static str>,
    /// What coordinates its replicas, for `simulate --replicas` ("a Kubernetes Lease").
    pub replicas: &'static str,
    /// `simulate`'s world on its fleets, as a sentence ("With --cluster: nodes fail, …").
    pub world: &'static str,
    /// The flag that names its fleet file, as `snapshot` and `generate` write one (`--cluster`).
    pub fleet_file: Option<&'static str>,
    /// How its fleet applies an admin's change, where not at once, as a sentence (for the
    /// admin commands' `--timeout`).
    pub applies: &'static str,
}

impl Help {
    /// A family that says nothing of its own in the help.
    pub const NONE: Help = Help {
        scopes: &[],
        targets: &[],
        target: "",
        marks: "",
        lock: None,
        kubeconfig: None,
        live: None,
        watched: None,
        replicas: "",
        world: "",
        fleet_file: None,
        applies: "",
    };
}
