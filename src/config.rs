//! Settings, with the defaults documented in `contrib/autorepair.toml` and the man page.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// Where `autorepair` looks for its config file when `--config` is not given.
pub const DEFAULT_CONFIG_PATH: &str = "/etc/autorepair/autorepair.toml";

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Fleet file for the file backend (`--cluster` overrides it).
    pub fleet_file: Option<PathBuf>,
    /// Lock file; default: one per fleet (`lock::beside`, `lock::for_url`).
    pub lock_file: Option<PathBuf>,
    pub limits: Limits,
    pub ganeti: Ganeti,
    pub rapi: Rapi,
    pub metal3: Metal3,
    pub machines: Machines,
    /// The keys the config file gives in `[limits]`: a family whose own settings bring limits
    /// of their own (the machines family, CKE's constraints) tells an operator's choice from a
    /// default.
    #[serde(skip)]
    pub limits_given: std::collections::BTreeSet<String>,
}

/// The `[limits]` section: the engine's limits, read as they are (`engine::Limits`).
pub use crate::engine::Limits;

/// The Ganeti family's `[ganeti]` section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Ganeti {
    /// Ganeti iallocator that picks new nodes; empty string: autorepair picks the least
    /// loaded usable node of the instance's group itself.
    pub iallocator: String,
    /// `run` acts only on the host that is the cluster's master, as Ganeti's own watcher does:
    /// installed from cron on every master candidate, it follows a master failover
    /// (`--only-on-master`).
    pub only_on_master: bool,
    /// Where this node's ssconf files are, which say who the master is; default
    /// `/var/lib/ganeti` (env `AUTOREPAIR_GANETI_SSCONF_DIR` wins).
    pub ssconf_dir: Option<PathBuf>,
    /// This host's name as a node of the cluster, when neither its kernel name nor its fully
    /// qualified name is one.
    pub node_name: Option<String>,
}

impl Default for Ganeti {
    fn default() -> Self {
        Ganeti {
            iallocator: crate::ganeti::DEFAULT_IALLOCATOR.into(),
            only_on_master: false,
            ssconf_dir: None,
            node_name: None,
        }
    }
}

impl Ganeti {
    pub fn iallocator(&self) -> Option<&str> {
        Some(self.iallocator.as_str()).filter(|a| !a.is_empty())
    }
}

/// Ganeti RAPI endpoint. The password is never stored here: only the file it is read from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Rapi {
    pub url: Option<String>,
    pub user: Option<String>,
    pub password_file: Option<PathBuf>,
    /// CA certificate to verify the server with (Ganeti's rapi.pem).
    pub ca_file: Option<PathBuf>,
    /// Skip TLS verification. Only for tests; say so by name.
    pub insecure: bool,
    #[serde(with = "humantime_serde")]
    pub timeout: Duration,
}

fn default_timeout() -> Duration {
    Duration::from_secs(60)
}

impl Default for Rapi {
    fn default() -> Self {
        Rapi {
            url: None,
            user: None,
            password_file: None,
            ca_file: None,
            insecure: false,
            timeout: default_timeout(),
        }
    }
}

/// The metal3 family's `[metal3]` section: its health checks and power-cycle timeouts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Metal3 {
    /// A Node not Ready this long needs repair (autorepair's own health check).
    #[serde(with = "humantime_serde")]
    pub node_unhealthy_after: Duration,
    /// A host not seen off this long after its power cycle started: the cycle fails and the
    /// host is powered back on.
    #[serde(with = "humantime_serde")]
    pub power_off_timeout: Duration,
    /// A power cycle not over (host on, Node back and Ready) this long after it started fails.
    #[serde(with = "humantime_serde")]
    pub cycle_timeout: Duration,
    /// A Machine power-cycled this recently is not power-cycled again.
    #[serde(with = "humantime_serde")]
    pub reboot_loop_window: Duration,
    #[serde(with = "humantime_serde")]
    pub drain_timeout: Duration,
    /// `hard` cuts the power at once; `soft` asks the OS first and may take minutes.
    pub power_mode: crate::metal3::PowerMode,
    /// How a powered-off host's Node is fenced: `delete-node`, or `out-of-service-taint`
    /// (the Node stays, tainted `node.kubernetes.io/out-of-service=nodeshutdown:NoExecute`
    /// until the host is back on and the Node Ready; Kubernetes ≥ 1.28).
    pub fencing: crate::metal3::Fencing,
}

impl Default for Metal3 {
    fn default() -> Self {
        let d = crate::metal3::Settings::default();
        let secs = |s: i64| Duration::from_secs(s.unsigned_abs());
        Metal3 {
            node_unhealthy_after: secs(d.node_unhealthy_after),
            power_off_timeout: secs(d.power_off_timeout),
            cycle_timeout: secs(d.cycle_timeout),
            reboot_loop_window: secs(d.reboot_loop_window),
            drain_timeout: secs(d.drain_timeout),
            power_mode: d.power_mode,
            fencing: d.fencing,
        }
    }
}

impl Metal3 {
    pub fn settings(&self) -> crate::metal3::Settings {
        let secs = |d: Duration| i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
        crate::metal3::Settings {
            node_unhealthy_after: secs(self.node_unhealthy_after),
            power_off_timeout: secs(self.power_off_timeout),
            cycle_timeout: secs(self.cycle_timeout),
            reboot_loop_window: secs(self.reboot_loop_window),
            drain_timeout: secs(self.drain_timeout),
            power_mode: self.power_mode,
            fencing: self.fencing,
        }
    }
}

/// The machines family's `[machines]` section: where the machines and their Nodes are, the
/// repair configuration and constraints, and which machines the trigger repairs. Each has a
/// flag, which wins.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Machines {
    /// A live sabakan's URL (`--sabakan`).
    pub sabakan: Option<String>,
    /// A sabakan machines file instead (`--sabakan-file`).
    pub sabakan_file: Option<PathBuf>,
    /// A CA to trust for an https:// sabakan, besides the system's roots (`--sabakan-ca`).
    pub ca_file: Option<PathBuf>,
    /// Per-request timeout for sabakan.
    #[serde(with = "humantime_serde")]
    pub timeout: Duration,
    /// CKE's cluster.yml, or its `repair:` section alone (`--repair-config`).
    pub repair_config: Option<PathBuf>,
    /// CKE's constraints, a JSON object (`--constraints`).
    pub constraints: Option<PathBuf>,
    /// The Nodes as `kubectl get nodes -o json` prints them (`--nodes`)...
    pub nodes: Option<PathBuf>,
    /// ...or the live cluster of this kubeconfig (`--kubeconfig`, `--kube-context`).
    pub kubeconfig: Option<PathBuf>,
    pub kube_context: Option<String>,
    /// The trigger's `$having` and `$notHaving`, as `ckecli sabakan set-variables` takes them
    /// (`having`, `notHaving`; `labels`, `racks`, `roles`, `states`, `minDaysBeforeRetire`).
    /// Unset: CKE's, UNHEALTHY and UNREACHABLE machines that are not boot servers. Set, a key
    /// left out is no condition (CKE sends it as `null`).
    pub variables: Option<crate::sabakan::client::Variables>,
}

impl Default for Machines {
    fn default() -> Self {
        Machines {
            sabakan: None,
            sabakan_file: None,
            ca_file: None,
            timeout: crate::sabakan::client::Endpoint::new("").timeout,
            repair_config: None,
            constraints: None,
            nodes: None,
            kubeconfig: None,
            kube_context: None,
            variables: None,
        }
    }
}

impl Machines {
    /// The trigger's query: the variables given, else CKE's.
    pub fn query(&self) -> crate::sabakan::client::Variables {
        self.variables
            .clone()
            .unwrap_or_else(crate::machines::Settings::default_query)
    }
}

#[derive(Debug, thiserror::Error)]
#[error("config file {path}: {message}")]
pub struct ConfigError {
    pub path: String,
    pub message: String,
}

impl Config {
    /// Parses a config file's text; `path` only names it in errors.
    pub fn from_toml(text: &str, path: &str) -> Result<Config, ConfigError> {
        let fail = |message: String| ConfigError {
            path: path.to_owned(),
            message,
        };
        let mut c: Config = match moved_iallocator(text) {
            Some(table) => {
                tracing::warn!(
                    "config file {path}: limits.iallocator is Ganeti's own setting: move it to the [ganeti] section (iallocator = …); it is read from [limits] until then"
                );
                Config::deserialize(toml::Value::Table(table)).map_err(|e| fail(e.to_string()))?
            }
            None => toml::from_str(text).map_err(|e| fail(e.to_string()))?,
        };
        if let Ok(table) = text.parse::<toml::Table>()
            && let Some(toml::Value::Table(limits)) = table.get("limits")
        {
            c.limits_given = limits.keys().cloned().collect();
        }
        if let Some(v) = &c.machines.variables {
            v.validate()
                .map_err(|e| fail(format!("[machines.variables]: {e}")))?;
        }
        Ok(c)
    }
}

/// The config's table with `limits.iallocator`, the key's old place, moved to
/// `ganeti.iallocator` (where a value already set wins), when the file has it there.
fn moved_iallocator(text: &str) -> Option<toml::Table> {
    let mut table: toml::Table = text.parse().ok()?;
    let old = match table.get_mut("limits") {
        Some(toml::Value::Table(limits)) => limits.remove("iallocator")?,
        _ => return None,
    };
    let ganeti = table
        .entry("ganeti")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    if let toml::Value::Table(ganeti) = ganeti {
        ganeti.entry("iallocator").or_insert(old);
    }
    Some(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metal3_section_is_read_and_defaults_to_the_familys() {
        let c = Config::from_toml("", "x").unwrap();
        assert_eq!(c.metal3.settings(), crate::metal3::Settings::default());
        let c = Config::from_toml(
            "[metal3]\ncycle_timeout = \"45m\"\npower_mode = \"soft\"\n",
            "x",
        )
        .unwrap();
        let s = c.metal3.settings();
        assert_eq!(s.cycle_timeout, 2700);
        assert_eq!(s.power_mode, crate::metal3::PowerMode::Soft);
        assert_eq!(s.fencing, crate::metal3::Fencing::DeleteNode);
        let c = Config::from_toml("[metal3]\nfencing = \"out-of-service-taint\"\n", "x").unwrap();
        assert_eq!(
            c.metal3.settings().fencing,
            crate::metal3::Fencing::OutOfServiceTaint
        );
        let e = Config::from_toml("[metal3]\nfencing = \"taint\"\n", "x").unwrap_err();
        assert!(e.to_string().contains("out-of-service-taint"), "{e}");
        let e = Config::from_toml("[metal3]\npower_mode = \"gentle\"\n", "x").unwrap_err();
        assert!(e.to_string().contains("gentle"), "{e}");
    }

    #[test]
    fn empty_file_gives_safe_defaults() {
        let c = Config::from_toml("", "x").unwrap();
        assert_eq!(c.limits.max_pending, None);
        assert_eq!(c.limits.max_domains_under_repair, 1);
        assert_eq!(c.ganeti.iallocator(), Some("hail"));
        assert!(!c.rapi.insecure);
    }

    #[test]
    fn durations_and_limits_are_read() {
        let c = Config::from_toml(
            "[limits]\nmax_pending = 3\nmax_down_nodes_per_group = 0\nresult_retention = \"2d\"\niallocator = \"\"\n",
            "x",
        )
        .unwrap();
        assert_eq!(c.limits.max_pending, Some(3));
        assert_eq!(c.limits.max_down_nodes_per_group, 0);
        assert_eq!(c.limits.result_retention, Duration::from_secs(2 * 86400));
        assert_eq!(c.ganeti.iallocator(), None);
        assert_eq!(
            c.limits_given
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
            [
                "iallocator",
                "max_down_nodes_per_group",
                "max_pending",
                "result_retention"
            ]
        );
    }

    #[test]
    fn the_documented_example_states_the_real_defaults() {
        let mut example =
            Config::from_toml(include_str!("../contrib/autorepair.toml"), "example").unwrap();
        // Limits whose default depends on the family are left out, as an operator should.
        for key in [
            "max_down_nodes_per_group",
            "max_down_nodes",
            "max_domains_under_repair",
        ] {
            assert!(!example.limits_given.contains(key), "{key}");
        }
        example.limits_given.clear();
        assert_eq!(example, Config::default());
    }

    #[test]
    fn the_machines_section_is_read_and_its_unknown_keys_refused() {
        let c = Config::from_toml("", "x").unwrap();
        assert_eq!(
            c.machines.query(),
            crate::machines::Settings::default_query()
        );
        let c = Config::from_toml(
            "[machines]\nsabakan = \"http://sabakan:10080\"\nkubeconfig = \"/k\"\n[machines.variables]\nhaving = { roles = [\"cs\"] }\n",
            "x",
        )
        .unwrap();
        assert_eq!(c.machines.sabakan.as_deref(), Some("http://sabakan:10080"));
        let q = c.machines.query();
        assert_eq!(q.having.unwrap().roles, Some(vec!["cs".to_owned()]));
        // Left out: no condition, as CKE sends it (null), not CKE's default.
        assert_eq!(q.not_having, None);
        for (text, want) in [
            ("[machines]\nsabakan_url = \"x\"\n", "sabakan_url"),
            ("[machines.variables]\nnot_having = {}\n", "not_having"),
            (
                "[machines.variables]\nhaving = { role = [\"cs\"] }\n",
                "role",
            ),
            (
                "[machines.variables]\nhaving = { states = [\"broken\"] }\n",
                "having.states: \"broken\"",
            ),
        ] {
            let e = Config::from_toml(text, "/etc/a.toml")
                .unwrap_err()
                .to_string();
            assert!(e.contains("/etc/a.toml") && e.contains(want), "{want}: {e}");
        }
    }

    /// The iallocator moved from `[limits]` to `[ganeti]`: a file with it at the old place
    /// still works (with a warning), and the new place wins when both are set.
    #[test]
    fn the_iallocator_is_read_in_its_section_and_at_its_old_place() {
        for (text, want) in [
            ("", Some("hail")),
            ("[ganeti]\niallocator = \"\"\n", None),
            ("[limits]\niallocator = \"\"\n", None),
            (
                "[limits]\niallocator = \"mine\"\nmax_pending = 2\n",
                Some("mine"),
            ),
            (
                "[limits]\niallocator = \"old\"\n[ganeti]\niallocator = \"new\"\n",
                Some("new"),
            ),
        ] {
            let c = Config::from_toml(text, "x").unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(c.ganeti.iallocator(), want, "{text}");
        }
        let c = Config::from_toml("[limits]\niallocator = \"\"\nmax_pending = 2\n", "x").unwrap();
        assert_eq!(c.limits.max_pending, Some(2));
        let e = Config::from_toml("[ganeti]\niallocatr = \"x\"\n", "/etc/a.toml").unwrap_err();
        assert!(e.to_string().contains("iallocatr"), "{e}");
    }

    #[test]
    fn a_typo_names_the_file_and_the_key() {
        let e = Config::from_toml("[limits]\nmax_pendng = 3\n", "/etc/a.toml").unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("/etc/a.toml") && text.contains("max_pendng"),
            "{text}"
        );
    }
}
