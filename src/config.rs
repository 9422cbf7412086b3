//! Settings, with the defaults documented in `contrib/autorepair.toml` and the man page.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Where `autorepair` looks for its config file when `--config` is not given.
pub const DEFAULT_CONFIG_PATH: &str = "/etc/autorepair/autorepair.toml";

/// The config file's own keys: the lock and the engine's limits. Every other top-level key
/// belongs to a family, which reads it from [`Config::families`] (`plug::FamilyFace::Config`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Config {
    /// Lock file; default: one per fleet (`lock::beside`, `lock::for_url`).
    pub lock_file: Option<PathBuf>,
    pub limits: Limits,
    /// The keys the config file gives in `[limits]`: a family whose own settings bring limits
    /// of their own (the machines family, CKE's constraints) tells an operator's choice from a
    /// default.
    pub limits_given: std::collections::BTreeSet<String>,
    /// The file's other top-level keys, for the families to take theirs; what no family takes
    /// is an unknown key ([`Config::unknown_keys`]).
    pub families: toml::Table,
    /// The file, for messages.
    pub path: String,
}

/// The keys of [`Config`] the config file gives itself.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
struct Own {
    lock_file: Option<PathBuf>,
    limits: Limits,
}

/// The defaults of the config file's own keys, as the file would write them.
pub fn own_defaults() -> serde_json::Value {
    serde_json::to_value(Own::default()).unwrap_or_default()
}

/// The top-level keys that are not a family's.
pub const OWN_KEYS: &[&str] = &["lock_file", "limits"];

/// The `[limits]` section: the engine's limits, read as they are (`engine::Limits`).
pub use crate::engine::Limits;

#[derive(Debug, thiserror::Error)]
#[error("config file {path}: {message}")]
pub struct ConfigError {
    pub path: String,
    pub message: ConfigProblem,
}

/// What is wrong in the config file, naming the key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigProblem {
    /// Not TOML, or a key whose value has the wrong shape: toml's own message names the key
    /// and the line.
    #[error(transparent)]
    Toml(#[from] toml::de::Error),
    /// A top-level key that neither the file nor any family reads.
    #[error("unknown key `{key}`: the file may have {}", known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", "))]
    UnknownKey { key: String, known: Vec<String> },
    /// A key that reads, but whose value a family's check refuses: `section` is the table it
    /// is in (`machines.variables`), `key` the key within it.
    #[error("[{section}] {key}: {problem}")]
    BadValue {
        section: &'static str,
        key: String,
        problem: String,
    },
}

impl Config {
    /// Parses a config file's text; `path` only names it in errors. `upgrade` moves what an
    /// older version read elsewhere to where it is read now (a family's hook) before anything
    /// is read.
    pub fn from_toml(
        text: &str,
        path: &str,
        upgrade: impl Fn(&mut toml::Table, &str),
    ) -> Result<Config, ConfigError> {
        let fail = |e: toml::de::Error| ConfigError {
            path: path.to_owned(),
            message: e.into(),
        };
        let mut table: toml::Table = text.parse().map_err(fail)?;
        let limits_given = match table.get("limits") {
            Some(toml::Value::Table(limits)) => limits.keys().cloned().collect(),
            _ => Default::default(),
        };
        upgrade(&mut table, path);
        let mut own = toml::Table::new();
        for key in OWN_KEYS {
            if let Some(v) = table.remove(*key) {
                own.insert((*key).to_owned(), v);
            }
        }
        let own = Own::deserialize(toml::Value::Table(own)).map_err(fail)?;
        Ok(Config {
            lock_file: own.lock_file,
            limits: own.limits,
            limits_given,
            families: table,
            path: path.to_owned(),
        })
    }

    /// Takes the keys `keys` out of the file's family keys and reads them as `T` (an
    /// unknown key among them is an error naming the file).
    pub fn take<T: serde::de::DeserializeOwned>(
        &mut self,
        keys: &[&str],
    ) -> Result<T, ConfigError> {
        let mut part = toml::Table::new();
        for key in keys {
            if let Some(v) = self.families.remove(*key) {
                part.insert((*key).to_owned(), v);
            }
        }
        T::deserialize(toml::Value::Table(part)).map_err(|e| ConfigError {
            path: self.path.clone(),
            message: e.into(),
        })
    }

    /// An error for the keys no family took, naming every key the file may have.
    pub fn unknown_keys(&self, known: &[&str]) -> Result<(), ConfigError> {
        match self.families.keys().next() {
            None => Ok(()),
            Some(key) => Err(ConfigError {
                path: self.path.clone(),
                message: ConfigProblem::UnknownKey {
                    key: key.clone(),
                    known: known.iter().map(|k| (*k).to_owned()).collect(),
                },
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ganeti::options::GanetiConfig;
    use crate::machines::options::MachinesConfig;
    use crate::metal3::options::Metal3Config;
    use crate::plug::{FamilyConfig, FamilyFace};
    use std::time::Duration;

    /// A config file's text read as the face reads it: its own keys, then each family's.
    struct Read {
        own: Config,
        ganeti: GanetiConfig,
        metal3: Metal3Config,
        machines: MachinesConfig,
    }

    fn read(text: &str, path: &str) -> Result<Read, ConfigError> {
        let mut own = Config::from_toml(text, path, |table, path| {
            <GanetiConfig as FamilyConfig>::upgrade(table, path)
        })?;
        let ganeti = own.take(crate::ganeti::Ganeti::CONFIG_KEYS)?;
        let metal3 = own.take(crate::metal3::Metal3::CONFIG_KEYS)?;
        let machines: MachinesConfig = own.take(crate::machines::Machines::CONFIG_KEYS)?;
        machines.check().map_err(|message| ConfigError {
            path: path.to_owned(),
            message,
        })?;
        own.unknown_keys(&["any"])?;
        Ok(Read {
            own,
            ganeti,
            metal3,
            machines,
        })
    }

    #[test]
    fn the_metal3_section_is_read_and_defaults_to_the_familys() {
        let c = read("", "x").unwrap();
        assert_eq!(
            c.metal3.metal3.settings(),
            crate::metal3::Settings::default()
        );
        let c = read(
            "[metal3]\ncycle_timeout = \"45m\"\npower_mode = \"soft\"\n",
            "x",
        )
        .unwrap();
        let s = c.metal3.metal3.settings();
        assert_eq!(s.cycle_timeout, 2700);
        assert_eq!(s.power_mode, crate::metal3::PowerMode::Soft);
        assert_eq!(s.fencing, crate::metal3::Fencing::DeleteNode);
        let c = read("[metal3]\nfencing = \"out-of-service-taint\"\n", "x").unwrap();
        assert_eq!(
            c.metal3.metal3.settings().fencing,
            crate::metal3::Fencing::OutOfServiceTaint
        );
        for (text, word) in [
            ("[metal3]\nfencing = \"taint\"\n", "out-of-service-taint"),
            ("[metal3]\npower_mode = \"gentle\"\n", "gentle"),
        ] {
            let e = read(text, "x").err().expect(text).to_string();
            assert!(e.contains(word), "{e}");
        }
    }

    #[test]
    fn empty_file_gives_safe_defaults() {
        let c = read("", "x").unwrap();
        assert_eq!(c.own.limits.max_pending, None);
        assert_eq!(c.own.limits.max_domains_under_repair, 1);
        assert_eq!(c.ganeti.ganeti.iallocator(), Some("hail"));
        assert!(!c.ganeti.rapi.insecure);
    }

    #[test]
    fn durations_and_limits_are_read() {
        let c = read(
            "[limits]\nmax_pending = 3\nmax_down_nodes_per_group = 0\nresult_retention = \"2d\"\niallocator = \"\"\n",
            "x",
        )
        .unwrap();
        assert_eq!(c.own.limits.max_pending, Some(3));
        assert_eq!(c.own.limits.max_down_nodes_per_group, 0);
        assert_eq!(
            c.own.limits.result_retention,
            Duration::from_secs(2 * 86400)
        );
        assert_eq!(c.ganeti.ganeti.iallocator(), None);
        assert_eq!(
            c.own
                .limits_given
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
        let example = read(include_str!("../contrib/autorepair.toml"), "example").unwrap();
        // Limits whose default depends on the family are left out, as an operator should.
        for key in [
            "max_down_nodes_per_group",
            "max_down_nodes",
            "max_domains_under_repair",
        ] {
            assert!(!example.own.limits_given.contains(key), "{key}");
        }
        assert_eq!(
            (example.own.lock_file, example.own.limits),
            (None, Limits::default())
        );
        assert_eq!(example.ganeti, GanetiConfig::default());
        assert_eq!(example.metal3, Metal3Config::default());
        assert_eq!(example.machines, MachinesConfig::default());
    }

    #[test]
    fn the_machines_section_is_read_and_its_unknown_keys_refused() {
        let c = read("", "x").unwrap();
        assert_eq!(
            c.machines.machines.query(),
            crate::machines::Settings::default_query()
        );
        let c = read(
            "[machines]\nsabakan = \"http://sabakan:10080\"\nkubeconfig = \"/k\"\n[machines.variables]\nhaving = { roles = [\"cs\"] }\n",
            "x",
        )
        .unwrap();
        assert_eq!(
            c.machines.machines.sabakan.as_deref(),
            Some("http://sabakan:10080")
        );
        let q = c.machines.machines.query();
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
                "[machines.variables] having.states: \"broken\" is not a state",
            ),
        ] {
            let e = read(text, "/etc/a.toml").err().expect(text).to_string();
            assert!(e.contains("/etc/a.toml") && e.contains(want), "{want}: {e}");
        }
    }

    /// Each kind of problem is told apart, naming the key: the shape's (toml's), a key no one
    /// reads, a value a family's check refuses.
    #[test]
    fn each_problem_names_its_key() {
        for (text, key) in [
            ("lock_file = 3\n", "lock_file"),
            ("[machines]\nsabakan_url = \"x\"\n", "sabakan_url"),
            ("nonsense = 1\n", "nonsense"),
            (
                "[machines.variables]\nnotHaving = { states = [\"broken\"] }\n",
                "notHaving.states",
            ),
        ] {
            let e = read(text, "/etc/a.toml").err().expect(text);
            assert_eq!(e.path, "/etc/a.toml");
            match e.message {
                ConfigProblem::Toml(t) => assert!(t.to_string().contains(key), "{key}: {t}"),
                ConfigProblem::UnknownKey { key: got, known } => {
                    assert_eq!((got.as_str(), known), (key, vec!["any".to_owned()]));
                }
                ConfigProblem::BadValue {
                    section,
                    key: got,
                    problem,
                } => {
                    assert_eq!((section, got.as_str()), ("machines.variables", key));
                    assert!(problem.contains("\"broken\""), "{problem}");
                }
            }
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
            let c = read(text, "x").unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(c.ganeti.ganeti.iallocator(), want, "{text}");
        }
        let c = read("[limits]\niallocator = \"\"\nmax_pending = 2\n", "x").unwrap();
        assert_eq!(c.own.limits.max_pending, Some(2));
        let e = read("[ganeti]\niallocatr = \"x\"\n", "/etc/a.toml")
            .err()
            .expect("typo");
        assert!(e.to_string().contains("iallocatr"), "{e}");
    }

    #[test]
    fn a_typo_names_the_file_and_the_key() {
        for (text, key) in [
            ("[limits]\nmax_pendng = 3\n", "max_pendng"),
            ("fleet_fle = \"x\"\n", "fleet_fle"),
            ("[metal]\nfencing = \"x\"\n", "metal"),
        ] {
            let text = read(text, "/etc/a.toml").err().expect(key).to_string();
            assert!(text.contains("/etc/a.toml") && text.contains(key), "{text}");
        }
    }
}
