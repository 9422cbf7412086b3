//! The cluster's master role, as the one actor among several watchers (`only_on_master`,
//! `--only-on-master`): a pass asks it before it starts and before every write it makes (see
//! [`OnlyOnMaster`]). Ganeti's own watcher
//! runs from cron on every node and acts only on the node that is the master; a watcher
//! installed on every master candidate does the same, so it follows a `gnt-cluster
//! master-failover` with no coordination of its own.
//!
//! The role is read where Ganeti's tools read it: the node's ssconf file `master_node`, which
//! the master pushes to every online node when the configuration changes, compared with this
//! host's name as Ganeti spells it (the fully qualified name, lower case, no trailing dot).

use crate::engine::{BackendError, Interceptor, Write};
use crate::ganeti::Ganeti;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where a Ganeti node keeps its copy of the cluster's simple configuration.
pub const SSCONF_DIR: &str = "/var/lib/ganeti";

/// What ssconf says when the cluster has lost its master (a failed failover).
const NO_MASTER: &str = "NO MASTER";

/// Whether this host may act for the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// This host is the master.
    Master,
    /// Another node is: this host stands by.
    Standby { master: String },
    /// The cluster has no master right now (between a failover's steps): nobody acts.
    NoMaster,
}

/// Why the role could not be read: each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum RoleError {
    #[error(
        "{}: cannot read it ({source}): this host is not a Ganeti node, or not yet one. `only_on_master` runs the watcher on the cluster's nodes (each master candidate); elsewhere, turn it off and keep one watcher",
        path.display()
    )]
    NotANode {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{}: empty; Ganeti writes the master's name there: check the node with `gnt-cluster verify`",
        path.display()
    )]
    Empty { path: PathBuf },
    #[error(
        "this host ({me}) is not one node of the cluster ({}); give its node name with `node_name` in the config's [ganeti] section",
        nodes.join(", ")
    )]
    Unknown { me: String, nodes: Vec<String> },
}

/// A node name as Ganeti compares names: lower case, no trailing dot.
fn canonical(name: &str) -> String {
    name.trim().trim_end_matches('.').to_ascii_lowercase()
}

/// Decides the role from ssconf's `master_node` and `node_list`, for a host known by the names
/// `me` (its kernel name, its fully qualified name).
///
/// Ganeti names a node by its fully qualified name. A short name (the kernel's host name often
/// is one) is the node whose first label it is, when exactly one node has it: a name that could
/// be two nodes is refused rather than guessed.
pub fn decide(master_node: &str, node_list: &str, me: &[String]) -> Result<Verdict, RoleError> {
    let master = canonical(master_node);
    if master == canonical(NO_MASTER) {
        return Ok(Verdict::NoMaster);
    }
    let me: Vec<String> = me
        .iter()
        .map(|n| canonical(n))
        .filter(|n| !n.is_empty())
        .collect();
    let nodes: Vec<String> = node_list
        .lines()
        .map(canonical)
        .filter(|n| !n.is_empty())
        .collect();
    let is_me = |node: &str| {
        me.iter().any(|name| {
            node == name || (!name.contains('.') && node.split('.').next() == Some(name.as_str()))
        })
    };
    let mine: Vec<&String> = nodes.iter().filter(|n| is_me(n)).collect();
    let me_as_node = match mine.as_slice() {
        [one] => (*one).clone(),
        // A master that is not (yet) in our copy of the node list: only an exact name counts.
        [] if me.contains(&master) => return Ok(Verdict::Master),
        _ => {
            return Err(RoleError::Unknown {
                me: me.join(" or "),
                nodes,
            });
        }
    };
    Ok(if me_as_node == master {
        Verdict::Master
    } else {
        Verdict::Standby { master }
    })
}

/// Reads this node's ssconf under `dir` and decides the role of the host known as `me`.
pub fn read(dir: &Path, me: &[String]) -> Result<Verdict, RoleError> {
    let read = |key: &str| {
        let path = dir.join(format!("ssconf_{key}"));
        crate::files::read_text(&path).map_err(|source| RoleError::NotANode { path, source })
    };
    let master = read("master_node")?;
    if master.trim().is_empty() {
        return Err(RoleError::Empty {
            path: dir.join("ssconf_master_node"),
        });
    }
    // An older node without the list still knows the master's name.
    let nodes = read("node_list").unwrap_or_default();
    decide(&master, &nodes, me)
}

/// Where a watcher in `only_on_master` mode reads the role, and who it is.
#[derive(Debug)]
pub struct Role {
    /// This node's ssconf directory ([`SSCONF_DIR`] unless told otherwise).
    pub ssconf_dir: PathBuf,
    /// This host's node name, as the config gives it; else [`host_names`], asked once.
    pub node_name: Option<String>,
    names: OnceLock<Vec<String>>,
}

impl Role {
    pub fn new(ssconf_dir: PathBuf, node_name: Option<String>) -> Role {
        Role {
            ssconf_dir,
            node_name,
            names: OnceLock::new(),
        }
    }

    /// The role now, read afresh from ssconf: a failover rewrites it on every online node.
    pub fn verdict(&self) -> Result<Verdict, RoleError> {
        let names = self.names.get_or_init(|| match &self.node_name {
            Some(name) => vec![name.clone()],
            None => host_names(),
        });
        read(&self.ssconf_dir, names)
    }

    /// Why a write is refused when the role is anything but master: the text the pass ends
    /// with. `None` while this host is the master.
    pub fn refusal(&self) -> Option<String> {
        refusal(self.verdict(), &self.ssconf_dir.join("ssconf_master_node"))
    }
}

/// The refusal of a write for a role read from `master_file` (see [`Role::refusal`]); the chaos
/// simulator's Ganeti replicas ask it too, of the ssconf copy each simulated node holds.
pub fn refusal(verdict: Result<Verdict, RoleError>, master_file: &Path) -> Option<String> {
    match verdict {
        Ok(Verdict::Master) => None,
        Ok(Verdict::Standby { master }) => Some(format!(
            "this host is no longer the cluster's master ({master} is, says {}): nothing more is written; the watcher on {master} carries on",
            master_file.display()
        )),
        Ok(Verdict::NoMaster) => Some(format!(
            "the cluster has no master now ({} says NO MASTER): nothing more is written until a node is master again",
            master_file.display()
        )),
        Err(e) => Some(format!(
            "cannot tell whether this host is still the cluster's master ({e}): nothing more is written"
        )),
    }
}

impl Role {
    /// Whether `url` reaches whichever node is master, by the cluster's name or its master IP as
    /// this node's ssconf gives them, rather than one node's own RAPI daemon.
    pub fn url_follows_the_master(&self, url: &str) -> bool {
        let read = |key: &str| {
            crate::files::read_text(self.ssconf_dir.join(format!("ssconf_{key}")))
                .unwrap_or_default()
        };
        follows_the_master(url, &read("cluster_name"), &read("master_ip"))
    }
}

/// See [`Role::url_follows_the_master`]: a write sent there as a failover takes the role away
/// can land on the new master, while one sent to this host's own daemon (127.0.0.1, its own
/// name) cannot: the failover stops that daemon before the new master starts.
pub fn follows_the_master(url: &str, cluster_name: &str, master_ip: &str) -> bool {
    let Some(host) = reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(|h| h.trim_matches(['[', ']']).to_owned()))
    else {
        return false;
    };
    let host = canonical(&host);
    [cluster_name, master_ip]
        .iter()
        .map(|n| canonical(n))
        .any(|n| !n.is_empty() && n == host)
}

/// Asks the master role before every write of a pass: a host that lost it in mid-pass (a
/// `gnt-cluster master-failover` ran) stops before its next write, and the new master's
/// watcher carries on from the tags. The writes made before were whole, so nothing is left
/// half-recorded.
///
/// This narrows the window, it does not close it: Ganeti's jobs take no precondition, so a
/// write already on its way when the role moves still lands (see docs/ganeti.md).
pub struct OnlyOnMaster {
    pub role: std::sync::Arc<Role>,
}

impl Interceptor<Ganeti> for OnlyOnMaster {
    fn before(&mut self, _: &Write<'_, Ganeti>) -> Result<(), BackendError> {
        match self.role.refusal() {
            None => Ok(()),
            Some(why) => Err(BackendError::Halted(why)),
        }
    }
}

/// This host's names: the kernel's (`uname -n`) and, when the resolver gives one, the fully
/// qualified name (`hostname --fqdn`, the canonical name of the kernel's, as Ganeti's own
/// `getfqdn` finds it through /etc/hosts or DNS).
pub fn host_names() -> Vec<String> {
    let kernel = rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned();
    let fqdn = std::process::Command::new("hostname")
        .arg("--fqdn")
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty());
    std::iter::once(kernel).chain(fqdn).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NODES: &str = "node1.example.test\nnode2.example.test\n";

    #[test]
    fn the_role_follows_ssconf() {
        use Verdict::*;
        let standby = |m: &str| Standby { master: m.into() };
        let cases: &[(&str, &str, &str, Result<Verdict, &str>)] = &[
            (
                "node1.example.test\n",
                NODES,
                "node1.example.test",
                Ok(Master),
            ),
            (
                "node1.example.test\n",
                NODES,
                "node2.example.test",
                Ok(standby("node1.example.test")),
            ),
            // Ganeti compares lower-cased names without a trailing dot.
            (
                "Node1.Example.Test.\n",
                NODES,
                "node1.example.test.",
                Ok(Master),
            ),
            // A short host name is the one node whose first label it is.
            ("node1.example.test\n", NODES, "node1", Ok(Master)),
            (
                "node1.example.test\n",
                NODES,
                "NODE2",
                Ok(standby("node1.example.test")),
            ),
            // Two nodes share the short name: refuse to guess.
            (
                "a.one.test\n",
                "a.one.test\na.two.test\n",
                "a",
                Err("is not one node"),
            ),
            // A host that is no node of this cluster.
            (
                "node1.example.test\n",
                NODES,
                "node9.example.test",
                Err("is not one node"),
            ),
            (
                "node1.example.test\n",
                NODES,
                "node1.other.test",
                Err("is not one node"),
            ),
            // A failover in progress: nobody acts.
            ("NO MASTER\n", NODES, "node1.example.test", Ok(NoMaster)),
            // A list without the master yet: only the exact name counts.
            ("node3.example.test\n", "", "node3.example.test", Ok(Master)),
        ];
        for (master, nodes, me, want) in cases {
            let got = decide(master, nodes, &[me.to_string()]);
            match (want, got) {
                (Ok(w), Ok(g)) => assert_eq!(&g, w, "{me} with master {master:?}"),
                (Err(text), Err(e)) => assert!(e.to_string().contains(text), "{e}"),
                (w, g) => panic!("{me} with master {master:?}: want {w:?}, got {g:?}"),
            }
        }
    }

    #[test]
    fn a_url_by_the_clusters_name_or_master_ip_follows_the_master() {
        let cases = [
            ("https://127.0.0.1:5080", false),
            ("https://localhost:5080", false),
            ("https://node1.example.test:5080", false),
            ("https://10.99.0.1:5080", false),
            ("https://cluster.example.test:5080", true),
            ("https://Cluster.Example.Test.:5080/", true),
            ("https://10.99.0.100:5080", true),
            ("not a url", false),
        ];
        for (url, follows) in cases {
            assert_eq!(
                follows_the_master(url, "cluster.example.test\n", "10.99.0.100\n"),
                follows,
                "{url}"
            );
        }
        assert!(
            !follows_the_master("https://10.99.0.100:5080", "", ""),
            "no ssconf"
        );
    }

    #[test]
    fn reading_ssconf_names_the_file_at_fault() {
        let dir = tempfile::tempdir().expect("tempdir");
        let node1 = ["node1".to_string()];
        let err = read(dir.path(), &node1).unwrap_err().to_string();
        assert!(
            err.contains("ssconf_master_node") && err.contains("not a Ganeti node"),
            "{err}"
        );
        std::fs::write(dir.path().join("ssconf_master_node"), "\n").expect("write");
        let err = read(dir.path(), &node1).unwrap_err().to_string();
        assert!(err.contains("empty"), "{err}");
        std::fs::write(
            dir.path().join("ssconf_master_node"),
            "node1.example.test\n",
        )
        .expect("write");
        std::fs::write(dir.path().join("ssconf_node_list"), NODES).expect("write");
        assert_eq!(read(dir.path(), &node1).expect("read"), Verdict::Master);
        assert_eq!(
            read(dir.path(), &["vm".into(), "node2.example.test".into()]).expect("read"),
            Verdict::Standby {
                master: "node1.example.test".into()
            }
        );
    }

    /// ssconf under `dir` saying `master` is the master of node1 and node2.
    fn ssconf(dir: &Path, master: &str) {
        std::fs::write(dir.join("ssconf_master_node"), format!("{master}\n")).expect("write");
        std::fs::write(dir.join("ssconf_node_list"), NODES).expect("write");
    }

    #[test]
    fn every_write_asks_the_role_afresh() {
        let dir = tempfile::tempdir().expect("tempdir");
        let role = std::sync::Arc::new(Role::new(
            dir.path().into(),
            Some("node1.example.test".into()),
        ));
        let mut guard = OnlyOnMaster { role };
        let object = crate::engine::ObjectRef::new("cluster", "");
        let write = Write::AddMarks {
            object: &object,
            marks: &[],
            reason: "r",
        };
        // (what ssconf says, the refusal's words; none: the write goes through)
        let cases: &[(Option<&str>, Option<&[&str]>)] = &[
            (Some("node1.example.test"), None),
            (
                Some("node2.example.test"),
                Some(&["no longer the cluster's master", "node2.example.test is"]),
            ),
            (Some("NO MASTER"), Some(&["no master now", "NO MASTER"])),
            (Some("node1.example.test"), None),
            // The file gone (the node removed from the cluster): nothing more is written.
            (None, Some(&["cannot tell", "ssconf_master_node"])),
        ];
        for (master, want) in cases {
            match master {
                Some(m) => ssconf(dir.path(), m),
                None => {
                    std::fs::remove_file(dir.path().join("ssconf_master_node")).expect("remove")
                }
            }
            match (guard.before(&write), want) {
                (Ok(()), None) => {}
                (Err(BackendError::Halted(why)), Some(words)) => {
                    for w in *words {
                        assert!(why.contains(w), "{master:?}: {w:?} missing in {why}");
                    }
                }
                (got, _) => panic!("{master:?}: want {want:?}, got {got:?}"),
            }
        }
    }

    /// Moves the master role to node2 once `after` writes were made, as a `gnt-cluster
    /// master-failover` run meanwhile would.
    struct FailoverAfter {
        after: usize,
        made: usize,
        dir: PathBuf,
    }

    impl Interceptor<Ganeti> for FailoverAfter {
        fn after(&mut self, _: &Write<'_, Ganeti>, _: Option<&u64>) {
            self.made += 1;
            if self.made == self.after {
                ssconf(&self.dir, "node2.example.test");
            }
        }
    }

    #[test]
    fn a_pass_that_loses_the_role_stops_before_its_next_write() {
        use crate::engine::{Intercepted, exec};
        use crate::ganeti::file::FleetFile;
        use crate::ganeti::testkit::Fleet;
        // Two instances on an offline node under a failover policy: each repair is several
        // writes (the pending tag, the job).
        let snap = Fleet::new()
            .autorepair(["failover"])
            .group("g1")
            .node("n1", "g1")
            .offline()
            .node("n2", "g1")
            .instance("a")
            .primary("n1")
            .instance("b")
            .primary("n1")
            .build();
        let plan = crate::ganeti::plan(&snap, 1_800_000_000, &Default::default(), 7);
        let planned = plan.actions().count();
        assert!(planned >= 2, "{planned}");
        for after in [1, 2] {
            let dir = tempfile::tempdir().expect("tempdir");
            ssconf(dir.path(), "node1.example.test");
            let role = std::sync::Arc::new(Role::new(
                dir.path().into(),
                Some("node1.example.test".into()),
            ));
            let mut file = FleetFile::in_memory(snap.clone());
            let failover = FailoverAfter {
                after,
                made: 0,
                dir: dir.path().into(),
            };
            let mut guarded = Intercepted::wrap(
                Intercepted::wrap(&mut file, failover),
                OnlyOnMaster { role },
            );
            let report = exec::execute(&plan, &mut guarded);
            assert_eq!(guarded.inner.by.made, after, "writes after the failover");
            let why = report.halted.expect("the pass says it stopped");
            assert!(why.contains("node2.example.test is"), "{why}");
            assert!(report.errors.is_empty(), "{:?}", report.errors);
        }
    }
}
