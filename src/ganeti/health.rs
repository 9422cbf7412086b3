//! Health of a Ganeti instance and the repair its failure needs, for every disk template.
//!
//! Unlike harep, a drained primary gets a live migration (not a failover or a reinstall),
//! externally mirrored and local templates are repaired too, and a case where the only
//! intact copy of the data sits on a node Ganeti will not fail over to is left to a person
//! instead of being reinstalled.

use super::snapshot::{Instance, Node, Op, OpKind};
use super::tags::GanetiLevel;
use crate::engine::text::FxMap;
use serde::Serialize;

/// How a node can be used, as far as repairs go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NodeState {
    Usable,
    /// Drained, or not vm_capable: still up, but Ganeti will not place instances there.
    Drained,
    Offline,
}

impl NodeState {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeState::Usable => "usable",
            NodeState::Drained => "drained",
            NodeState::Offline => "offline",
        }
    }
}

pub fn node_state(node: &Node) -> NodeState {
    if node.offline {
        NodeState::Offline
    } else if node.drained || !node.vm_capable {
        NodeState::Drained
    } else {
        NodeState::Usable
    }
}

/// Disk templates grouped by where the data lives, which decides how to repair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Storage {
    /// drbd: a mirror on the primary and one secondary.
    Mirrored,
    /// diskless, sharedfile, rbd, ext, gluster, blockdev: any node of the group reaches it.
    Shared,
    /// plain, file: only on the primary.
    Local,
}

pub fn storage_of(disk_template: &str) -> Option<Storage> {
    match disk_template {
        "drbd" => Some(Storage::Mirrored),
        "diskless" | "sharedfile" | "rbd" | "ext" | "gluster" | "blockdev" => Some(Storage::Shared),
        "plain" | "file" => Some(Storage::Local),
        _ => None,
    }
}

/// An instance's health, in the engine's terms with Ganeti's ladder.
pub type Health = crate::engine::Health<GanetiLevel>;
pub type Need = crate::engine::Need<GanetiLevel>;

/// A node as the instance refers to it: present in the snapshot or not.
pub type NodeRef<'a> = Result<&'a Node, &'a str>;

/// Decides the instance's health from its nodes. `primary` and `secondary` are looked up by
/// the caller; `Err(name)` means the snapshot has no such node.
pub fn assess(inst: &Instance, primary: NodeRef, secondary: Option<NodeRef>) -> Health {
    use NodeState::*;
    let broken = |problem: String, need: Need| Health::Broken { problem, need };
    let Some(storage) = storage_of(&inst.disk_template) else {
        return broken(
            format!("unknown disk template {:?}", inst.disk_template),
            Need::Person(
                "autorepair knows no safe repair for this disk template: repair by hand".into(),
            ),
        );
    };
    let primary = match primary {
        Ok(node) => node,
        Err(name) => return missing_node(name, "primary"),
    };
    let p = node_state(primary);
    let pname = &primary.name;
    match storage {
        Storage::Shared => match p {
            Usable => Health::Healthy,
            Drained => broken(
                format!("primary {pname} is drained"),
                Need::Repair(GanetiLevel::Migrate),
            ),
            Offline => broken(
                format!("primary {pname} is offline"),
                Need::Repair(GanetiLevel::Failover),
            ),
        },
        Storage::Local => match p {
            Usable => Health::Healthy,
            // Move copies the disks while the instance is down: failover-level downtime.
            Drained => broken(
                format!("primary {pname} is drained"),
                Need::Repair(GanetiLevel::Failover),
            ),
            Offline => broken(
                format!("primary {pname} is offline and holds the only copy of the disks"),
                Need::Repair(GanetiLevel::Reinstall),
            ),
        },
        Storage::Mirrored => {
            let secondary = match secondary {
                None => {
                    return broken(
                        "drbd instance without a secondary node".into(),
                        Need::Person(
                            "the snapshot lists no secondary: check the instance with gnt-instance info".into(),
                        ),
                    );
                }
                Some(Err(name)) => return missing_node(name, "secondary"),
                Some(Ok(node)) => node,
            };
            let s = node_state(secondary);
            let sname = &secondary.name;
            match (p, s) {
                (Usable, Usable) => Health::Healthy,
                (Usable | Drained, Drained | Offline) => broken(
                    format!("secondary {sname} is {}", s.as_str()),
                    Need::Repair(GanetiLevel::FixStorage),
                ),
                (Drained, Usable) => broken(
                    format!("primary {pname} is drained"),
                    Need::Repair(GanetiLevel::Migrate),
                ),
                (Offline, Usable) => broken(
                    format!("primary {pname} is offline"),
                    Need::Repair(GanetiLevel::Failover),
                ),
                (Offline, Drained) => broken(
                    format!("primary {pname} is offline and secondary {sname} is drained"),
                    Need::Person(format!(
                        "Ganeti will not fail over onto a drained node, and a reinstall would throw away the intact copy on {sname}: undrain {sname} (gnt-node modify --drained no) so the failover can run"
                    )),
                ),
                (Offline, Offline) => broken(
                    format!("primary {pname} and secondary {sname} are offline"),
                    Need::Repair(GanetiLevel::Reinstall),
                ),
            }
        }
    }
}

/// [`assess`] with the nodes looked up by name.
pub fn assess_with<'a>(inst: &'a Instance, lookup: impl Fn(&str) -> Option<&'a Node>) -> Health {
    let node = |name: &'a str| lookup(name).ok_or(name);
    assess(
        inst,
        node(&inst.pnode),
        inst.snodes.first().map(|s| node(s)),
    )
}

fn missing_node(name: &str, role: &str) -> Health {
    Health::Broken {
        problem: format!("{role} node {name:?} is not in the snapshot"),
        need: Need::Person(
            "the fleet data is inconsistent: check that the node exists (gnt-node list)".into(),
        ),
    }
}

/// The operations of a repair, in order. Each repair type maps to one fixed chain per storage
/// kind, so a half-submitted chain can be completed after a crash from its jobs' kinds alone.
pub fn chain(storage: Storage, repair: GanetiLevel) -> Option<&'static [OpKind]> {
    use GanetiLevel as R;
    use OpKind::*;
    match (storage, repair) {
        (Storage::Mirrored, R::FixStorage) => Some(&[ReplaceDisks]),
        (Storage::Mirrored, R::Migrate) => Some(&[Migrate]),
        // After the failover the dead old primary is the secondary: give the mirror a new one.
        (Storage::Mirrored, R::Failover) => Some(&[Failover, ReplaceDisks]),
        (Storage::Mirrored | Storage::Local, R::Reinstall) => Some(&[RecreateDisks, Reinstall]),
        (Storage::Shared, R::Migrate) => Some(&[Migrate]),
        (Storage::Shared, R::Failover) => Some(&[Failover]),
        (Storage::Local, R::Failover) => Some(&[Move]),
        _ => None,
    }
}

/// Usable nodes per group, least loaded first: where new nodes for a repair come from when no
/// iallocator chooses them (and how the fleet-file simulator plays the iallocator).
#[derive(Debug, Default)]
pub struct NodePool<'a> {
    group_of: FxMap<&'a str, &'a str>,
    usable_by_group: FxMap<&'a str, Vec<&'a str>>,
}

impl<'a> NodePool<'a> {
    pub fn new(nodes: &'a [Node], instances: &'a [Instance]) -> Self {
        let mut load: FxMap<&str, usize> = Default::default();
        for i in instances {
            *load.entry(i.pnode.as_str()).or_default() += 1;
        }
        let mut pool = NodePool::default();
        pool.group_of.reserve(nodes.len());
        for n in nodes {
            pool.group_of.insert(&n.name, &n.group_uuid);
            if node_state(n) == NodeState::Usable {
                pool.usable_by_group
                    .entry(&n.group_uuid)
                    .or_default()
                    .push(&n.name);
            }
        }
        for list in pool.usable_by_group.values_mut() {
            list.sort_by_key(|n| (load.get(n).copied().unwrap_or(0), *n));
        }
        pool
    }
}

impl NodePicker for NodePool<'_> {
    fn pick(&self, group_of: &str, exclude: &[&str], count: usize) -> Vec<String> {
        let Some(group) = self.group_of.get(group_of) else {
            return vec![];
        };
        self.usable_by_group
            .get(group)
            .into_iter()
            .flatten()
            .filter(|n| !exclude.contains(n))
            .take(count)
            .map(|n| (*n).to_owned())
            .collect()
    }
}

/// Where new nodes for a repair come from.
pub trait NodePicker {
    /// Up to `count` usable nodes of the instance's group, not in `exclude`, best first.
    fn pick(&self, group_of: &str, exclude: &[&str], count: usize) -> Vec<String>;
}

/// Why no operation can be built for an instance: too few nodes to move it to.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("needs {needed} usable node(s) in the group of {pnode} besides its own, found {found}")]
pub struct NoRoom {
    /// The instance's primary node, whose group the nodes must be in.
    pub pnode: String,
    pub needed: usize,
    pub found: usize,
}

/// Builds one operation for the instance as it is now. `iallocator` lets Ganeti choose nodes;
/// without it the picker chooses. `Err` says why no operation can be built.
pub fn build_op(
    kind: OpKind,
    inst: &Instance,
    storage: Storage,
    iallocator: Option<&str>,
    picker: &dyn NodePicker,
) -> Result<Op, NoRoom> {
    let mut exclude: Vec<&str> = vec![inst.pnode.as_str()];
    exclude.extend(inst.snodes.iter().map(String::as_str));
    let ialloc = iallocator.map(str::to_owned);
    let pick = |count: usize| -> Result<Vec<String>, NoRoom> {
        let nodes = picker.pick(&inst.pnode, &exclude, count);
        if nodes.len() < count {
            Err(NoRoom {
                pnode: inst.pnode.clone(),
                needed: count,
                found: nodes.len(),
            })
        } else {
            Ok(nodes)
        }
    };
    let one = |count| pick(count).map(|mut v| v.swap_remove(0));
    Ok(match kind {
        OpKind::Failover | OpKind::Migrate => {
            // drbd always goes to its secondary; shared storage goes wherever there is room.
            let (target_node, iallocator) = match (storage, &ialloc) {
                (Storage::Mirrored, _) => (None, None),
                (_, Some(a)) => (None, Some(a.clone())),
                (_, None) => (Some(one(1)?), None),
            };
            if kind == OpKind::Failover {
                Op::Failover {
                    target_node,
                    iallocator,
                }
            } else {
                Op::Migrate {
                    target_node,
                    iallocator,
                    allow_failover: !inst.admin_up(),
                }
            }
        }
        OpKind::ReplaceDisks => match ialloc {
            Some(a) => Op::ReplaceDisks {
                remote_node: None,
                iallocator: Some(a),
            },
            None => Op::ReplaceDisks {
                remote_node: Some(one(1)?),
                iallocator: None,
            },
        },
        OpKind::RecreateDisks => match ialloc {
            Some(a) => Op::RecreateDisks {
                nodes: vec![],
                iallocator: Some(a),
            },
            None => Op::RecreateDisks {
                nodes: pick(if storage == Storage::Mirrored { 2 } else { 1 })?,
                iallocator: None,
            },
        },
        OpKind::Reinstall => Op::Reinstall,
        // Ganeti's move takes no iallocator.
        OpKind::Move => Op::Move {
            target_node: one(1)?,
        },
    })
}

#[cfg(test)]
mod tests;
