//! Ganeti's coordination as the chaos simulator's replicas use it: a watcher on each of the
//! first nodes in `only_on_master` mode, and the cluster's master role, which an admin moves
//! (`gnt-cluster master-failover`). Each node keeps its own copy of ssconf's `master_node`,
//! which a failover rewrites on every node it reaches; a replica's check before a write is
//! production's ([`master::decide`] on that copy, refused as [`master::refusal`] says).

use crate::engine::BackendError;
use crate::engine::sim::{Coordination, NotHeld};
use crate::ganeti::master::{self, SSCONF_DIR};
use std::path::PathBuf;

pub struct MasterRole {
    nodes: Vec<String>,
    /// ssconf's `node_list`, as every node has it.
    node_list: String,
    /// The master, as the cluster itself knows it.
    master: usize,
    /// Each node's copy of `master_node`.
    ssconf: Vec<String>,
    running: Vec<bool>,
    frozen: Vec<bool>,
    /// Cut off from the other nodes: its ssconf copy is not rewritten.
    cut: Vec<bool>,
    master_file: PathBuf,
}

impl MasterRole {
    /// Watchers on `count` nodes; the first is the master.
    pub fn new(count: usize) -> MasterRole {
        let nodes: Vec<String> = (1..=count)
            .map(|n| format!("node{n}.example.test"))
            .collect();
        MasterRole {
            node_list: nodes.iter().map(|n| format!("{n}\n")).collect(),
            ssconf: vec![nodes[0].clone(); count],
            nodes,
            master: 0,
            running: vec![true; count],
            frozen: vec![false; count],
            cut: vec![false; count],
            master_file: PathBuf::from(SSCONF_DIR).join("ssconf_master_node"),
        }
    }

    /// `gnt-cluster master-failover`, run on the next node that reaches the cluster. It must
    /// stop the old master's daemons: a master cut off from the others keeps its role (the
    /// `--no-voting` failover that would leave two masters is outside this model, and outside
    /// what `only_on_master` promises: docs/ganeti.md).
    fn fail_over(&mut self, from: usize) -> bool {
        if from != self.master || self.cut[from] {
            return false;
        }
        let count = self.nodes.len();
        let Some(to) = (1..count)
            .map(|k| (from + k) % count)
            .find(|n| !self.cut[*n])
        else {
            return false;
        };
        self.master = to;
        for n in 0..count {
            if !self.cut[n] {
                self.ssconf[n] = self.nodes[to].clone();
            }
        }
        true
    }
}

impl Coordination for MasterRole {
    fn name(&self, r: usize) -> String {
        format!("the watcher on {}", self.nodes[r])
    }

    /// The role changes only when an admin moves it.
    fn run_until(&mut self, _at: i64) {}

    fn acting(&self, at: i64) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|r| self.running[*r] && !self.frozen[*r] && self.check(*r, 0, at).is_ok())
            .collect()
    }

    /// The role is asked afresh before every write: there are no terms.
    fn term(&self, _r: usize) -> u64 {
        0
    }

    /// Refused as production's write guard refuses ([`master::OnlyOnMaster`]).
    fn check(&self, r: usize, _term: u64, _at: i64) -> Result<(), BackendError> {
        let verdict = master::decide(
            &self.ssconf[r],
            &self.node_list,
            std::slice::from_ref(&self.nodes[r]),
        );
        master::refusal(verdict, &self.master_file)
            .map_or(Ok(()), |why| Err(BackendError::Halted(why)))
    }

    fn truth(&self, r: usize, _at: i64) -> Result<(), NotHeld> {
        if r == self.master {
            Ok(())
        } else {
            Err(NotHeld::RoleOfAnother {
                role: "the cluster's master",
                holder: self.nodes[self.master].clone(),
            })
        }
    }

    /// The watcher dies; the role stays (cron starts it again for the next pass).
    fn kill(&mut self, r: usize, _at: i64) {
        self.running[r] = false;
    }

    /// A master that hangs is failed over by an admin while it is stopped.
    fn freeze(&mut self, r: usize, _at: i64) {
        self.frozen[r] = true;
        self.fail_over(r);
    }

    fn thaw(&mut self, r: usize, _at: i64) {
        self.frozen[r] = false;
    }

    fn cut(&mut self, r: usize, _at: i64) {
        self.cut[r] = true;
    }

    fn hand_over(&mut self, r: usize, _at: i64) -> bool {
        self.fail_over(r)
    }

    /// Cron starts every node's watcher again; a node back in touch gets the current ssconf.
    fn restart(&mut self, _at: i64) {
        for r in 0..self.nodes.len() {
            self.running[r] = true;
            if self.cut[r] {
                self.cut[r] = false;
                self.ssconf[r] = self.nodes[self.master].clone();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_role_follows_a_failover_except_on_a_node_cut_off_and_never_leaves_a_cut_off_master() {
        let mut m = MasterRole::new(3);
        assert_eq!(m.acting(0), vec![0]);
        m.cut(2, 0);
        assert!(m.hand_over(0, 0));
        assert_eq!(m.acting(0), vec![1]);
        assert_eq!(m.truth(1, 0), Ok(()));
        let refused = m.check(0, 0, 0).unwrap_err();
        assert!(
            matches!(&refused, BackendError::Halted(why) if why.contains("node2.example.test is")),
            "{refused}"
        );
        assert_eq!(
            m.truth(0, 0),
            Err(NotHeld::RoleOfAnother {
                role: "the cluster's master",
                holder: "node2.example.test".into()
            })
        );
        // Node 3 did not hear of it, and still thinks node1 is master: it does not act.
        assert!(m.check(2, 0, 0).is_err());
        m.cut(1, 0);
        assert!(!m.hand_over(1, 0), "a cut-off master keeps the role");
        m.restart(0);
        assert_eq!(m.acting(0), vec![1]);
    }
}
