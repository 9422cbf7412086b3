//! The metrics as Prometheus sees them: autorepair writes its textfiles, Debian's
//! `prometheus-node-exporter` serves them with its textfile collector, and Debian's `prometheus`
//! scrapes it over loopback. Every sample of every file must arrive through Prometheus' query
//! API with its labels and value; the shipped alerting rules must load and pass their
//! `promtool` unit tests; and every query of the Grafana dashboard must run and name only
//! series that autorepair writes (or the rules record).
//!
//! Needs `prometheus`, `promtool` and `prometheus-node-exporter` on PATH
//! (`apt-get install prometheus prometheus-node-exporter`). Without them the tests say so and
//! pass, unless `AUTOREPAIR_REQUIRE_PROMETHEUS` is set, as `.ci/run` sets it.

use serde_json::Value;
use std::collections::BTreeSet;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const NOW: i64 = 1_800_000_000;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// A daemon killed when the test ends, however it ends.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(program: &str, args: &[String], log: &Path) -> Daemon {
    let log = std::fs::File::create(log).unwrap();
    Daemon(
        Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("{program}: {e}")),
    )
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn autorepair(args: &[&str], dir: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_autorepair"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "autorepair {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Two passes of the Ganeti demo (a group held by a mass-failure limit, repairs started and
/// refused) and of the machines demo, both families' files in one textfile directory, as two
/// watchers on one host would write them.
fn write_textfiles(dir: &Path) -> [(PathBuf, &'static str); 2] {
    let textfiles = dir.join("textfiles");
    std::fs::create_dir(&textfiles).unwrap();
    std::fs::copy(repo("fixtures/demo.json"), dir.join("demo.json")).unwrap();
    std::fs::write(
        dir.join("strict.toml"),
        "[limits]\nmax_down_nodes_per_group = 1\n",
    )
    .unwrap();
    std::fs::copy(
        repo("fixtures/machines-demo.json"),
        dir.join("machines.json"),
    )
    .unwrap();
    std::fs::copy(
        repo("fixtures/machines-demo-nodes.json"),
        dir.join("nodes.json"),
    )
    .unwrap();
    for pass in 0..2 {
        let now = (NOW + 300 * pass).to_string();
        autorepair(
            &[
                "--config",
                "strict.toml",
                "run",
                "--cluster",
                "demo.json",
                "--now",
                &now,
                "--metrics-file",
                "textfiles/ganeti.prom",
            ],
            dir,
        );
        let (config, constraints) = (
            repo("fixtures/machines-demo.yml"),
            repo("fixtures/machines-constraints.json"),
        );
        autorepair(
            &[
                "--config",
                "/dev/null",
                "--sabakan-file",
                "machines.json",
                "--nodes",
                "nodes.json",
                "--repair-config",
                config.to_str().unwrap(),
                "--constraints",
                constraints.to_str().unwrap(),
                "run",
                "--now",
                &now,
                "--metrics-file",
                "textfiles/machines.prom",
            ],
            dir,
        );
    }
    [
        (textfiles.join("ganeti.prom"), "ganeti"),
        (textfiles.join("machines.prom"), "machines"),
    ]
}

/// One sample line of a textfile: the selector that finds it, and its value.
fn sample(line: &str) -> (String, f64) {
    let (series, value) = line.rsplit_once(' ').unwrap();
    (series.to_owned(), value.parse().unwrap())
}

struct Prometheus {
    url: String,
    http: reqwest::blocking::Client,
}

impl Prometheus {
    fn query(&self, expr: &str) -> Vec<Value> {
        let answer: Value = self
            .http
            .get(format!("{}/api/v1/query", self.url))
            .query(&[("query", expr)])
            .send()
            .and_then(|r| r.json())
            .unwrap_or_else(|e| panic!("query {expr}: {e}"));
        assert_eq!(answer["status"], "success", "query {expr}: {answer}");
        answer["data"]["result"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// Waits until `expr` has at least `n` series.
    fn wait_for(&self, expr: &str, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let got = self
                .http
                .get(format!("{}/api/v1/query", self.url))
                .query(&[("query", expr)])
                .send()
                .ok()
                .and_then(|r| r.json::<Value>().ok())
                .and_then(|v| v["data"]["result"].as_array().map(Vec::len))
                .unwrap_or(0);
            if got >= n {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{expr}: {got} of {n} series after 90 s"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

fn metric_names(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| {
            let (name, kind) = l.split_once(' ')?;
            Some(if kind == "summary" {
                [format!("{name}_sum"), format!("{name}_count")]
                    .into_iter()
                    .collect::<Vec<_>>()
            } else {
                vec![name.to_owned()]
            })
        })
        .flatten()
        .collect()
}

/// The series names an expression reads (autorepair's and CKE's, recording rules included).
fn names_in(expr: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = expr;
    while let Some(at) = ["autorepair", "cke_"]
        .iter()
        .filter_map(|p| rest.find(p))
        .min()
    {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(tail.len());
        names.insert(tail[..end].to_owned());
        rest = &tail[end..];
    }
    names
}

#[test]
#[cfg_attr(
    not(have_prometheus),
    ignore = "needs prometheus, promtool and prometheus-node-exporter: apt-get install prometheus prometheus-node-exporter"
)]
fn the_alerting_rules_pass_their_unit_tests() {
    let dir = repo("contrib/prometheus");
    for args in [
        ["check", "rules", "autorepair.rules.yml"],
        ["test", "rules", "autorepair.rules.test.yml"],
    ] {
        let out = Command::new("promtool")
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "promtool {args:?}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
#[cfg_attr(
    not(have_prometheus),
    ignore = "needs prometheus, promtool and prometheus-node-exporter: apt-get install prometheus prometheus-node-exporter"
)]
fn every_sample_reaches_prometheus_with_its_labels_and_the_dashboard_queries_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let files = write_textfiles(dir);

    // One node exporter over the one directory: it refuses a series whose HELP differs
    // between files, or that two files both export.
    let exporter_port = free_port();
    let mut daemons = vec![spawn(
        "prometheus-node-exporter",
        &[
            format!("--web.listen-address=127.0.0.1:{exporter_port}"),
            "--collector.disable-defaults".into(),
            "--collector.textfile".into(),
            format!(
                "--collector.textfile.directory={}",
                files[0].0.parent().unwrap().display()
            ),
        ],
        &dir.join("node-exporter.log"),
    )];
    let target = format!("127.0.0.1:{exporter_port}");
    let targets = [target.clone()];
    let port = free_port();
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global: {{scrape_interval: 1s, evaluation_interval: 1s}}\n\
             rule_files: [{rules:?}]\n\
             scrape_configs:\n  - job_name: node\n    static_configs:\n      - targets: {targets:?}\n",
            rules = repo("contrib/prometheus/autorepair.rules.yml"),
        ),
    )
    .unwrap();
    daemons.push(spawn(
        "prometheus",
        &[
            format!("--config.file={}", config.display()),
            format!("--storage.tsdb.path={}", dir.join("data").display()),
            format!("--web.listen-address=127.0.0.1:{port}"),
        ],
        &dir.join("prometheus.log"),
    ));
    let prom = Prometheus {
        url: format!("http://127.0.0.1:{port}"),
        http: reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap(),
    };
    // Both exporters scraped at least once, each with its file read without error.
    prom.wait_for("node_textfile_scrape_error == 0", 1);

    let mut written = BTreeSet::new();
    for (file, family) in &files {
        // Debian's node exporter runs as user prometheus, not as autorepair's root.
        let mode = std::os::unix::fs::PermissionsExt::mode(&file.metadata().unwrap().permissions());
        assert_eq!(mode & 0o777, 0o644, "{family}: {}", file.display());
        let text = std::fs::read_to_string(file).unwrap();
        written.extend(metric_names(&text));
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .collect();
        assert!(lines.len() > 20, "{family}: only {} samples", lines.len());
        for line in lines {
            let (series, value) = sample(line);
            assert!(
                series.contains(&format!("family=\"{family}\"")),
                "{family}: {line}"
            );
            let selector = match series.strip_suffix('}') {
                Some(labels) => format!("{labels},instance=\"{target}\",job=\"node\"}}"),
                None => format!("{series}{{instance=\"{target}\",job=\"node\"}}"),
            };
            let found = prom.query(&selector);
            assert_eq!(found.len(), 1, "{family}: {selector} gave {found:?}");
            let got: f64 = found[0]["value"][1].as_str().unwrap().parse().unwrap();
            assert_eq!(got, value, "{family}: {selector}");
        }
    }
    // The series the rules and the dashboard rely on are among them, with their labels.
    for expr in [
        r#"autorepair_mass_failure{family="ganeti",scope="group/ams-b",limit="max_down_nodes_per_group"}"#,
        r#"autorepair_mass_failure_passes{family="ganeti"} == 2"#,
        r#"autorepair_repairs_started_total{family="ganeti"} > 0"#,
        r#"autorepair_targets{family="machines",state="needs-repair"}"#,
        r#"cke_repair_queue_items{family="machines",status="queued"}"#,
    ] {
        assert_eq!(prom.query(expr).len(), 1, "{expr}");
    }

    // The rules loaded and evaluate.
    let deadline = Instant::now() + Duration::from_secs(60);
    let rules = loop {
        let rules: Value = prom
            .http
            .get(format!("{}/api/v1/rules", prom.url))
            .send()
            .and_then(|r| r.json())
            .unwrap();
        let all: Vec<Value> = rules["data"]["groups"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["rules"].as_array().unwrap().clone())
            .collect();
        if !all.is_empty()
            && all
                .iter()
                .all(|r| r["lastEvaluation"] != "0001-01-01T00:00:00Z")
        {
            break all;
        }
        assert!(Instant::now() < deadline, "rules never evaluated: {rules}");
        std::thread::sleep(Duration::from_millis(250));
    };
    let recorded: BTreeSet<String> = rules
        .iter()
        .filter(|r| r["type"] == "recording")
        .map(|r| r["name"].as_str().unwrap().to_owned())
        .collect();
    for rule in &rules {
        assert_eq!(rule["health"], "ok", "{rule}");
        for name in names_in(rule["query"].as_str().unwrap()) {
            assert!(
                written.contains(&name) || recorded.contains(&name),
                "a rule reads {name}, which nothing writes"
            );
        }
    }

    // Every dashboard query runs and reads only what autorepair writes or the rules record.
    let dashboard: Value = serde_json::from_str(
        &std::fs::read_to_string(repo("contrib/grafana/autorepair.json")).unwrap(),
    )
    .unwrap();
    let mut exprs = Vec::new();
    collect_exprs(&dashboard["panels"], &mut exprs);
    assert!(exprs.len() > 10, "{exprs:?}");
    for expr in exprs {
        let expr = expr.replace("$family", ".*").replace("$instance", ".*");
        for name in names_in(&expr) {
            assert!(
                written.contains(&name) || recorded.contains(&name),
                "the dashboard reads {name}, which nothing writes: {expr}"
            );
        }
        prom.query(&expr);
    }
    drop(daemons);
}

fn collect_exprs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("expr", Value::String(e)) => out.push(e.clone()),
                    _ => collect_exprs(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_exprs(v, out)),
        _ => {}
    }
}
