use super::super::Chain;
use super::*;
use crate::FAMILIES;
use crate::cli::parse_from;
use crate::ganeti::Ganeti;
use crate::ganeti::rapi::Endpoint;
use crate::ganeti::tags::is_repair_id;
use crate::machines::{
    Machines,
    face::{MachinesFrom, NodesFrom},
};
use crate::metal3::Metal3;

/// A scratch directory with two fleet files (`a.json`, `b.json`), a password file (`pw`) and the
/// config file each case writes.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.json", "b.json"] {
            std::fs::write(dir.path().join(name), "{}").unwrap();
        }
        std::fs::write(dir.path().join("pw"), "from-file\nsecond line\n").unwrap();
        std::fs::write(dir.path().join("empty-pw"), "\n").unwrap();
        // CKE repair configurations: one step, undrained (`repair.yml`) or drained.
        let repair = "repair:\n  repair_procedures:\n    - machine_types: [qemu]\n      repair_operations:\n        - operation: unhealthy\n          health_check_command: [h]\n          repair_steps:\n            - repair_command: [x]\n";
        std::fs::write(dir.path().join("repair.yml"), repair).unwrap();
        let drained = format!("{repair}              need_drain: true\n");
        std::fs::write(dir.path().join("drain.yml"), drained).unwrap();
        Scratch { dir }
    }

    /// `text` with `{dir}` replaced by the scratch directory.
    fn fill(&self, text: &str) -> String {
        text.replace("{dir}", &self.dir.path().display().to_string())
    }

    /// Resolves `args` (after `autorepair`) with `config` as the config file's text.
    fn resolve(&self, args: &str, config: &str, env: &Env) -> Result<Settings, SettingsError> {
        self.resolve_over(FAMILIES, args, config, env)
    }

    /// [`Scratch::resolve`] with only `families` registered.
    fn resolve_over(
        &self,
        families: &[&dyn Registered],
        args: &str,
        config: &str,
        env: &Env,
    ) -> Result<Settings, SettingsError> {
        let conf = self.dir.path().join("autorepair.toml");
        std::fs::write(&conf, self.fill(config)).unwrap();
        let mut argv: Vec<String> = vec!["autorepair".into()];
        argv.extend(self.fill(args).split_whitespace().map(str::to_owned));
        argv.extend(["--config".into(), conf.display().to_string()]);
        let parsed = parse_from(families, &argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
        let logs = Logs::resolve(&parsed.cli.global, env, &parsed.cli.command);
        Settings::resolve(parsed, families, logs, env)
    }
}

/// One row: what is given (flags, config file, environment) and what it must resolve to: the
/// projected value, or an error whose message contains every one of the words.
struct Case {
    args: &'static str,
    config: &'static str,
    env: Env,
    want: Result<&'static str, &'static [&'static str]>,
}

fn case(
    args: &'static str,
    config: &'static str,
    want: Result<&'static str, &'static [&'static str]>,
) -> Case {
    Case {
        args,
        config,
        env: Env::default(),
        want,
    }
}

fn with_env(mut c: Case, env: Env) -> Case {
    c.env = env;
    c
}

fn password_env(password: &str) -> Env {
    Env {
        vars: crate::plug::claim::Vars(
            [("AUTOREPAIR_RAPI_PASSWORD".to_owned(), password.to_owned())].into(),
        ),
        ..Env::default()
    }
}

/// Checks every case, with `project` turning the settings into the value compared.
fn check(cases: Vec<Case>, project: impl Fn(&Settings) -> String) {
    let scratch = Scratch::new();
    for (i, c) in cases.iter().enumerate() {
        let got = scratch.resolve(c.args, c.config, &c.env);
        let what = format!("case {i}: `{}` with config {:?}", c.args, c.config);
        match (&got, &c.want) {
            (Ok(s), Ok(want)) => assert_eq!(project(s), scratch.fill(want), "{what}"),
            (Err(e), Err(words)) => {
                let text = Chain(e).to_string();
                for w in *words {
                    assert!(
                        text.contains(&scratch.fill(w)),
                        "{what}: {w:?} not in {text:?}"
                    );
                }
            }
            (got, want) => panic!("{what}: got {got:?}, want {want:?}"),
        }
    }
}

/// `$body` over the fleet job of `$s`, whatever its family.
macro_rules! on_job {
    ($s:expr, $job:ident => $body:expr) => {
        match &$s.job {
            Job::Fleet(job) => {
                let any = job.as_any();
                if let Some($job) = any.downcast_ref::<FleetJob<Ganeti>>() {
                    $body
                } else if let Some($job) = any.downcast_ref::<FleetJob<Metal3>>() {
                    $body
                } else if let Some($job) = any.downcast_ref::<FleetJob<Machines>>() {
                    $body
                } else {
                    panic!("a fleet of no known family in {job:?}")
                }
            }
            job => panic!("no fleet in {job:?}"),
        }
    };
}

/// The fleet job of `s` if its family is `F`.
fn family_job<F: FamilyFace + 'static>(s: &Settings) -> Option<&FleetJob<F>> {
    match &s.job {
        Job::Fleet(job) => job.as_any().downcast_ref(),
        _ => None,
    }
}

fn fleet_of<F: FamilyFace>(job: &FleetJob<F>) -> &Fleet<F> {
    match job {
        FleetJob::Status { fleet, .. }
        | FleetJob::Explain { fleet, .. }
        | FleetJob::Report { fleet, .. }
        | FleetJob::Lint { fleet, .. }
        | FleetJob::Run { fleet, .. }
        | FleetJob::Admin { fleet, .. }
        | FleetJob::Simulate { fleet, .. }
        | FleetJob::Snapshot { fleet, .. }
        | FleetJob::Own { fleet, .. } => fleet,
    }
}

/// Where the fleet is, as messages say it.
fn described(s: &Settings) -> String {
    on_job!(s, job => fleet_of(job).describe())
}

fn limits(s: &Settings) -> &Limits {
    on_job!(s, job => &fleet_of(job).limits)
}

fn ganeti(s: &Settings) -> &FleetJob<Ganeti> {
    family_job::<Ganeti>(s).unwrap_or_else(|| panic!("{:?}, not Ganeti", s.job))
}

fn endpoint(s: &Settings) -> &Endpoint {
    match &fleet_of(ganeti(s)).source.from {
        crate::ganeti::face::Where::Rapi(e) => e,
        other => panic!("{other:?}, not RAPI"),
    }
}

const RAPI: &str = "https://rapi.example.org:5080";

#[test]
fn the_fleet_source_is_the_flag_else_the_config() {
    let cases = vec![
        case("status --cluster {dir}/a.json", "", Ok("{dir}/a.json")),
        case(
            "status --cluster {dir}/a.json",
            "fleet_file = \"{dir}/b.json\"",
            Ok("{dir}/a.json"),
        ),
        case(
            "status",
            "fleet_file = \"{dir}/b.json\"",
            Ok("{dir}/b.json"),
        ),
        // A flag of one kind sets the config's other kind aside.
        case(
            "status --cluster {dir}/a.json",
            "[rapi]\nurl = \"https://elsewhere:5080\"",
            Ok("{dir}/a.json"),
        ),
        with_env(
            case(
                "status --rapi https://rapi.example.org:5080 --rapi-user u",
                "fleet_file = \"{dir}/b.json\"",
                Ok(RAPI),
            ),
            password_env("p"),
        ),
        with_env(
            case(
                "status --rapi https://rapi.example.org:5080",
                "[rapi]\nurl = \"https://elsewhere:5080\"\nuser = \"u\"",
                Ok(RAPI),
            ),
            password_env("p"),
        ),
        with_env(
            case(
                "status",
                "[rapi]\nurl = \"https://rapi.example.org:5080\"\nuser = \"u\"",
                Ok(RAPI),
            ),
            password_env("p"),
        ),
        case("status", "", Err(&["no fleet", "--cluster", "--rapi"])),
        case(
            "status",
            "fleet_file = \"{dir}/b.json\"\n[rapi]\nurl = \"https://x:1\"",
            Err(&["fleet_file", "rapi.url"]),
        ),
    ];
    check(cases, described);
}

#[test]
fn rapi_credentials_come_from_flags_then_config_then_environment() {
    let rapi = "status --rapi https://rapi.example.org:5080";
    let cases = vec![
        // (user, password, ca file, insecure)
        with_env(
            case(
                "status --rapi https://rapi.example.org:5080 --rapi-user flag --rapi-password-file {dir}/pw --rapi-ca /flag.pem",
                "[rapi]\nuser = \"config\"\npassword_file = \"{dir}/empty-pw\"\nca_file = \"/config.pem\"",
                Ok("flag from-file Some(\"/flag.pem\") false"),
            ),
            password_env("from-env"),
        ),
        with_env(
            case(
                rapi,
                "[rapi]\nuser = \"config\"\npassword_file = \"{dir}/pw\"\nca_file = \"/config.pem\"\ninsecure = true",
                Ok("config from-file Some(\"/config.pem\") true"),
            ),
            password_env("from-env"),
        ),
        with_env(
            case(
                rapi,
                "[rapi]\nuser = \"config\"",
                Ok("config from-env None false"),
            ),
            password_env("from-env"),
        ),
        with_env(
            case(
                "status --rapi https://rapi.example.org:5080 --rapi-user u --insecure",
                "",
                Ok("u from-env None true"),
            ),
            password_env("from-env"),
        ),
        with_env(
            case(rapi, "", Err(&["no RAPI user", "--rapi-user", "rapi.user"])),
            password_env("p"),
        ),
        case(
            rapi,
            "[rapi]\nuser = \"u\"",
            Err(&[
                "no RAPI password",
                "--rapi-password-file",
                "AUTOREPAIR_RAPI_PASSWORD",
            ]),
        ),
        case(
            "status --rapi https://rapi.example.org:5080 --rapi-user u --rapi-password-file {dir}/nowhere",
            "",
            Err(&["{dir}/nowhere", "os error 2"]),
        ),
        case(
            rapi,
            "[rapi]\nuser = \"u\"\npassword_file = \"{dir}/empty-pw\"",
            Err(&["{dir}/empty-pw", "empty"]),
        ),
    ];
    check(cases, |s| {
        let e = endpoint(s);
        format!(
            "{} {} {:?} {}",
            e.user,
            e.password.read().unwrap(),
            e.ca_file,
            e.insecure
        )
    });
}

#[test]
fn only_what_a_person_reads_asks_ganeti_for_the_run_status() {
    let env = password_env("p");
    let rapi = "--rapi https://rapi.example.org:5080 --rapi-user u --lock-file /x.lock";
    let cases = [
        ("status", true),
        ("explain i1", true),
        ("snapshot", true),
        ("run --dry-run", false),
        ("tags lint", false),
        ("resume cluster", false),
        ("simulate", false),
    ];
    let scratch = Scratch::new();
    for (command, want) in cases {
        let args = format!("{command} {rapi}");
        let s = scratch.resolve(&args, "", &env).unwrap();
        assert_eq!(endpoint(&s).run_status, want, "{command}");
    }
}

#[test]
fn the_lock_is_the_flag_else_the_config_else_the_fleets_own() {
    let cases = vec![
        case(
            "run --cluster {dir}/a.json --lock-file /flag.lock",
            "lock_file = \"/config.lock\"",
            Ok("Some(\"/flag.lock\")"),
        ),
        case(
            "resume cluster --cluster {dir}/a.json",
            "lock_file = \"/config.lock\"",
            Ok("Some(\"/config.lock\")"),
        ),
        case(
            "suspend cluster --cluster {dir}/a.json",
            "",
            Ok("Some(\"{dir}/a.json.lock\")"),
        ),
        case(
            "run --cluster {dir}/./a.json",
            "",
            Ok("Some(\"{dir}/a.json.lock\")"),
        ),
        with_env(
            case(
                "run --rapi https://Rapi.example.org:5080 --rapi-user u",
                "",
                Ok("Some(\"/run/lock/autorepair-rapi.example.org:5080.lock\")"),
            ),
            password_env("p"),
        ),
        // A dry run takes no lock, so it names none.
        case("run --dry-run --cluster {dir}/a.json", "", Ok("None")),
        // The fleet file is checked even with a named lock: a typo leaves no lock file behind.
        case(
            "run --cluster {dir}/typo.json --lock-file /flag.lock",
            "",
            Err(&["{dir}/typo.json", "does not exist"]),
        ),
        with_env(
            case(
                "allow failover cluster --rapi https://:5080 --rapi-user u",
                "",
                Err(&["https://:5080", "empty host"]),
            ),
            password_env("p"),
        ),
    ];
    let scratch = Scratch::new();
    // Paths are compared canonical: the scratch directory may sit behind a symlink.
    let canonical = std::fs::canonicalize(scratch.dir.path()).unwrap();
    for c in &cases {
        let got = scratch.resolve(c.args, c.config, &c.env);
        let lock = |s: &Settings| match ganeti(s) {
            FleetJob::Run { run, .. } => format!("{:?}", run.lock),
            FleetJob::Admin { lock, .. } => format!("{:?}", Some(lock)),
            job => panic!("{job:?}"),
        };
        match (&got, &c.want) {
            (Ok(s), Ok(want)) => assert_eq!(
                lock(s),
                want.replace("{dir}", &canonical.display().to_string()),
                "{}",
                c.args
            ),
            (Err(e), Err(words)) => {
                let text = Chain(e).to_string();
                for w in *words {
                    assert!(text.contains(&scratch.fill(w)), "{}: {text}", c.args);
                }
            }
            (got, want) => panic!("{}: got {got:?}, want {want:?}", c.args),
        }
    }
}

#[test]
fn run_flags_override_the_config_limits() {
    let cases = vec![
        case(
            "run --cluster {dir}/a.json --max-pending 3 --max-broken 9",
            "[limits]\nmax_pending = 5\nmax_broken = 7",
            Ok("Some(3) Some(9) 1"),
        ),
        case(
            "run --cluster {dir}/a.json",
            "[limits]\nmax_pending = 5\nmax_broken = 7\nmax_domains_under_repair = 2",
            Ok("Some(5) Some(7) 2"),
        ),
        case("run --cluster {dir}/a.json", "", Ok("None None 1")),
        // Only `run` has the flags; the others plan with the config's limits.
        case(
            "status --cluster {dir}/a.json",
            "[limits]\nmax_pending = 5",
            Ok("Some(5) None 1"),
        ),
        case(
            "run --cluster {dir}/a.json",
            "[limits]\nmax_pendng = 5",
            Err(&["{dir}/autorepair.toml", "max_pendng"]),
        ),
    ];
    check(cases, |s| {
        let l = limits(s);
        format!(
            "{:?} {:?} {}",
            l.max_pending, l.max_broken, l.max_domains_under_repair
        )
    });
}

#[test]
fn run_settings_are_resolved() {
    let cases = vec![
        case(
            "run --cluster {dir}/a.json --dry-run --now 7 --passes 3",
            "",
            Ok("true Some(7) None Some(3) None"),
        ),
        case(
            "run --cluster {dir}/a.json --dry-run --loop --metrics-file /m.prom",
            "",
            Ok("true wall Some(300s) None Some(\"/m.prom\")"),
        ),
        case(
            "run --cluster {dir}/a.json --dry-run --loop --interval 1h",
            "",
            Ok("true wall Some(3600s) None None"),
        ),
    ];
    check(cases, |s| {
        let FleetJob::Run { run, .. } = ganeti(s) else {
            panic!("{:?}", s.job)
        };
        let clock = if run.clock == Clock::wall() {
            "wall".to_owned()
        } else {
            format!("Some({})", run.clock.now())
        };
        format!(
            "{} {clock} {:?} {:?} {:?}",
            run.dry_run, run.every, run.passes, run.metrics_file
        )
    });
}

#[test]
fn the_log_filter_is_the_flag_else_rust_log_else_info() {
    let rust_log = |v: &str| Env {
        rust_log: Some(v.to_owned()),
        ..Env::default()
    };
    let cases = vec![
        with_env(
            case("tags parse x --log debug", "", Ok("Flag(\"debug\")")),
            rust_log("warn"),
        ),
        with_env(
            case("tags parse x", "", Ok("Env(\"warn\")")),
            rust_log("warn"),
        ),
        case("tags parse x", "", Ok("Default")),
    ];
    check(cases, |s| format!("{:?}", s.logs.filter));
}

#[test]
fn colour_only_on_a_terminal_and_without_no_color() {
    let cases = [
        (true, None, true),
        (true, Some(""), true),
        (true, Some("1"), false),
        (true, Some("0"), false),
        (false, None, false),
        (false, Some(""), false),
        (false, Some("1"), false),
    ];
    for (terminal, no_color, want) in cases {
        assert_eq!(
            colour(terminal, no_color.map(std::ffi::OsStr::new)),
            want,
            "terminal {terminal}, NO_COLOR={no_color:?}"
        );
        // Logs ask about stderr, the printer about stdout.
        let env = Env {
            no_color: no_color.map(OsString::from),
            stderr_is_terminal: terminal,
            stdout_is_terminal: !terminal,
            ..Env::default()
        };
        let s = Scratch::new().resolve("tags parse x", "", &env).unwrap();
        assert_eq!(s.logs.colour, want);
        assert_eq!(
            s.output.colour,
            !terminal && no_color.is_none_or(str::is_empty)
        );
    }
}

#[test]
fn json_is_the_commands_own_flag() {
    let cases = vec![
        case("tags parse x --json", "", Ok("true")),
        case("tags parse x", "", Ok("false")),
        case("status --json --cluster {dir}/a.json", "", Ok("true")),
        case("explain i --json --cluster {dir}/a.json", "", Ok("true")),
        case("tags lint --json --cluster {dir}/a.json", "", Ok("true")),
        case(
            "run --json --dry-run --cluster {dir}/a.json",
            "",
            Ok("true"),
        ),
        case("simulate --json --cluster {dir}/a.json", "", Ok("true")),
        case("snapshot --cluster {dir}/a.json", "", Ok("false")),
        // --log-json is about the logs, not the output.
        case("status --log-json --cluster {dir}/a.json", "", Ok("false")),
    ];
    check(cases, |s| s.output.json.to_string());
}

#[test]
fn each_invalid_input_names_the_culprit() {
    let cases = vec![
        case(
            "generate --instances 3 --broken 1.5",
            "",
            Err(&["--broken 1.5", "between 0 and 1"]),
        ),
        // generate, tags parse and sabakan do not read the config.
        case("generate --instances 3", "this is not toml", Ok("")),
        // `suspend --for 0s` is refused by the flag's parser (tests/it/numbers.rs).
        case(
            "suspend cluster --until 100 --now 100 --cluster {dir}/a.json",
            "",
            Err(&["--until 100", "not after now"]),
        ),
        case(
            "request failover group/ --now 100 --cluster {dir}/a.json",
            "",
            Err(&["\"group/\"", "names no object"]),
        ),
        case(
            "clear disk/x --cluster {dir}/a.json",
            "",
            Err(&["\"disk\"", "unknown object kind"]),
        ),
        case(
            "status --cluster {dir}/a.json",
            "[limits]\nmax_pendng = 3",
            Err(&["config file {dir}/autorepair.toml", "max_pendng"]),
        ),
        case(
            "status --cluster {dir}/a.json",
            "fleet_file = 3",
            Err(&["{dir}/autorepair.toml", "fleet_file"]),
        ),
        case(
            "resume cluster --cluster {dir}/typo.json",
            "",
            Err(&["fleet file {dir}/typo.json: does not exist", "--cluster"]),
        ),
    ];
    check(cases, |_| String::new());
}

#[test]
fn a_config_named_must_exist_the_default_one_need_not() {
    let scratch = Scratch::new();
    let missing = scratch.dir.path().join("nowhere.toml");
    let cli = parse_from(
        FAMILIES,
        [
            "autorepair".as_ref(),
            "status".as_ref(),
            "--config".as_ref(),
            missing.as_os_str(),
        ],
    )
    .unwrap()
    .cli;
    let e = load_config(&cli.global, FAMILIES).unwrap_err();
    assert_eq!(
        Chain(&e).to_string(),
        format!(
            "cannot read config file {}: No such file or directory (os error 2)",
            missing.display()
        )
    );
    if !std::path::Path::new(DEFAULT_CONFIG_PATH).exists() {
        let mut cli = parse_from(FAMILIES, ["autorepair", "status"]).unwrap().cli;
        cli.global.config = None;
        let config = load_config(&cli.global, FAMILIES).unwrap();
        assert_eq!((config.lock_file, config.limits), (None, Limits::default()));
    }
}

#[test]
fn admin_verbs_resolve_to_their_edit() {
    let cases = vec![
        case(
            "allow failover group/g --cluster {dir}/a.json",
            "",
            Ok("group/g Allow(Some(Failover))"),
        ),
        case(
            "allow none i1 --cluster {dir}/a.json",
            "",
            Ok("instance/i1 Allow(None)"),
        ),
        case(
            "suspend cluster --for 1h --now 100 --cluster {dir}/a.json",
            "",
            Ok("cluster Suspend { until: Some(3700), all: false }"),
        ),
        case(
            "suspend cluster --until 200 --now 100 --cluster {dir}/a.json",
            "",
            Ok("cluster Suspend { until: Some(200), all: false }"),
        ),
        case(
            "suspend --all cluster --cluster {dir}/a.json",
            "",
            Ok("cluster Suspend { until: None, all: true }"),
        ),
        case(
            "resume instance/i1 --cluster {dir}/a.json",
            "",
            Ok("instance/i1 Resume { all: false }"),
        ),
        case(
            "resume cluster --all --cluster {dir}/a.json",
            "",
            Ok("cluster Resume { all: true }"),
        ),
        case(
            "clear i1 --cluster {dir}/a.json",
            "",
            Ok("instance/i1 Clear"),
        ),
    ];
    check(cases, |s| {
        let FleetJob::Admin { object, verb, .. } = ganeti(s) else {
            panic!("{:?}", s.job)
        };
        format!("{object} {verb:?}")
    });
    let s = Scratch::new()
        .resolve(
            "request migrate i1 --now 100 --cluster {dir}/a.json",
            "",
            &Env::default(),
        )
        .unwrap();
    let FleetJob::Admin {
        verb: Verb::Request { repair, id, now },
        ..
    } = ganeti(&s)
    else {
        panic!("{:?}", s.job)
    };
    assert_eq!((repair.to_string().as_str(), *now), ("migrate", 100));
    assert!(is_repair_id(id), "{id}");
}

/// The machines fleet: a flag, else the config's `[machines]` key; a flag for another fleet
/// wins over the section; what a machines flag needs is named when it is missing.
#[test]
fn the_machines_fleet_is_the_flags_else_the_config_section() {
    let project = |s: &Settings| {
        let Some(job) = family_job::<Machines>(s) else {
            return "not machines".to_owned();
        };
        let m = &fleet_of(job).source;
        let from = match &m.from {
            MachinesFrom::File(p) => format!("file {}", p.display()),
            MachinesFrom::Sabakan(e) => format!(
                "sabakan {} {:?} {}",
                e.url,
                e.timeout,
                e.ca_file
                    .as_ref()
                    .map_or("-".into(), |p| p.display().to_string())
            ),
        };
        let nodes = match &m.nodes {
            NodesFrom::None => "no nodes".to_owned(),
            NodesFrom::File(p) => format!("nodes {}", p.display()),
            NodesFrom::Kube(crate::k8s::Source::Kubeconfig { path, context }) => format!(
                "kube {} {}",
                path.as_ref().unwrap().display(),
                context.as_deref().unwrap_or("-")
            ),
            NodesFrom::Kube(other) => format!("{other:?}"),
        };
        let query = serde_json::to_string(&m.settings.query).unwrap();
        format!("{from}; {nodes}; now {:?}; {query}", m.now)
    };
    let cke = r#"{"having":{"labels":null,"racks":null,"roles":null,"states":["UNHEALTHY","UNREACHABLE"]},"notHaving":{"labels":null,"racks":null,"roles":["boot"],"states":null}}"#;
    let cases = vec![
        case(
            "--sabakan http://s:10080 --repair-config {dir}/repair.yml status --now 5",
            "",
            Ok(Box::leak(
                format!("sabakan http://s:10080 30s -; no nodes; now Some(5); {cke}")
                    .into_boxed_str(),
            )),
        ),
        case(
            "run --now 7",
            "[machines]\nsabakan = \"http://s:1\"\nrepair_config = \"{dir}/repair.yml\"\nnodes = \"{dir}/n.json\"\ntimeout = \"5s\"\nca_file = \"{dir}/ca.pem\"\n",
            Ok(Box::leak(
                format!(
                    "sabakan http://s:1 5s {{dir}}/ca.pem; nodes {{dir}}/n.json; now Some(7); {cke}"
                )
                .into_boxed_str(),
            )),
        ),
        // Flags win over their keys.
        case(
            "--sabakan-file {dir}/a.json --kubeconfig {dir}/kc --kube-context c2 status",
            "[machines]\nsabakan = \"http://s:1\"\nrepair_config = \"{dir}/repair.yml\"\nnodes = \"{dir}/n.json\"\nkube_context = \"c1\"\n[machines.variables]\nhaving = { roles = [\"cs\"] }\n",
            Ok(
                r#"file {dir}/a.json; kube {dir}/kc c2; now None; {"having":{"labels":null,"racks":null,"roles":["cs"],"states":null},"notHaving":null}"#,
            ),
        ),
        case(
            "status",
            "[machines]\nsabakan_file = \"{dir}/a.json\"\nrepair_config = \"{dir}/drain.yml\"\nkubeconfig = \"{dir}/kc\"\nkube_context = \"c1\"\n",
            Ok(Box::leak(
                format!("file {{dir}}/a.json; kube {{dir}}/kc c1; now None; {cke}")
                    .into_boxed_str(),
            )),
        ),
        // A flag for another fleet wins over the section.
        case(
            "status --cluster {dir}/a.json",
            "[machines]\nsabakan = \"http://s:1\"\n",
            Ok("not machines"),
        ),
        case(
            "--repair-config {dir}/repair.yml status --cluster {dir}/a.json",
            "",
            Err(&["--repair-config", "machines fleet", "--sabakan URL"]),
        ),
        case(
            "--kubeconfig {dir}/kc status --cluster {dir}/a.json",
            "",
            Err(&["--kubeconfig", "--kube", "--sabakan"]),
        ),
        case(
            "status",
            "fleet_file = \"{dir}/a.json\"\n[machines]\nsabakan = \"http://s:1\"\n",
            Err(&["[machines] sabakan", "fleet_file"]),
        ),
        case(
            "status",
            "[machines]\nsabakan = \"http://s:1\"\nsabakan_file = \"{dir}/a.json\"\n",
            Err(&["sabakan and sabakan_file"]),
        ),
        case(
            "--sabakan http://s:1 status",
            "[machines]\nrepair_config = \"{dir}/repair.yml\"\nnodes = \"{dir}/n\"\nkubeconfig = \"{dir}/kc\"\n",
            Err(&["nodes and kubeconfig"]),
        ),
        case(
            "--sabakan http://s:1 --repair-config {dir}/drain.yml status",
            "",
            Err(&["needs a drain", "--nodes FILE", "--kubeconfig FILE"]),
        ),
        case(
            "--sabakan http://s:1 status",
            "",
            Err(&[
                "http://s:1",
                "--repair-config FILE",
                "machines.repair_config",
            ]),
        ),
        case(
            "--sabakan http://s:1 status",
            "[machines]\nsabakn = \"x\"\n",
            Err(&["{dir}/autorepair.toml", "sabakn"]),
        ),
    ];
    check(cases, project);
}

/// `snapshot` and `simulate` are offered by the families that register them: on a fleet of a
/// family that registers neither, each is refused at the settings stage (exit 2), naming the
/// registered families that offer it and how to name a fleet of each.
#[test]
fn a_command_only_some_families_offer_names_the_families_that_do() {
    use crate::face::Entry;
    use crate::toy::Toy;
    let toy: &dyn Registered = &Entry::<Toy>::NEW;
    let ganeti: &dyn Registered = &Entry::<Ganeti>::NEW;
    let metal3: &dyn Registered = &Entry::<Metal3>::NEW;
    let scratch = Scratch::new();
    let resolve = |families: &[&dyn Registered], args: &str| {
        scratch.resolve_over(families, args, "", &Env::default())
    };
    let refusal = |families: &[&dyn Registered], args: &str| {
        let e = resolve(families, args).expect_err(args);
        assert!(matches!(e, SettingsError::Unsupported { .. }), "{e:?}");
        let e = crate::face::Error::from(e);
        assert_eq!(e.exit(), crate::plug::Exit::Usage, "{args}");
        Chain(&e)
            .to_string()
            .replace(&scratch.dir.path().display().to_string(), "{dir}")
    };
    assert_eq!(
        refusal(&[toy, ganeti], "--toy-room {dir}/a.json snapshot"),
        "{dir}/a.json holds boxes (the toy family): `snapshot` works only on a fleet of the \
         ganeti family, named by --cluster FILE or --rapi URL (Ganeti)"
    );
    assert_eq!(
        refusal(&[toy, ganeti, metal3], "--toy-room {dir}/a.json simulate"),
        "{dir}/a.json holds boxes (the toy family): `simulate` works only on a fleet of the \
         ganeti or metal3 family, named by --cluster FILE or --rapi URL (Ganeti); \
         --kube-objects FILE or --kube (metal3)"
    );
    assert_eq!(
        refusal(&[toy], "--toy-room {dir}/a.json snapshot"),
        "{dir}/a.json holds boxes (the toy family): `snapshot` works only on a fleet of a \
         family that offers it, and none here does"
    );
    // The family that offers it gets its job, with its own command in it.
    let s = resolve(&[toy, ganeti], "--cluster {dir}/a.json snapshot").unwrap();
    assert!(
        matches!(family_job::<Ganeti>(&s), Some(FleetJob::Snapshot { .. })),
        "{:?}",
        s.job
    );
    let s = resolve(&[toy, metal3], "--kube-objects {dir}/a.json simulate").unwrap();
    assert!(
        matches!(family_job::<Metal3>(&s), Some(FleetJob::Simulate { .. })),
        "{:?}",
        s.job
    );
}

/// --kubeconfig on a fleet whose family reads none, and --leader-elect without a Lease to
/// elect with, are refused naming the registered families' Kubernetes clusters: over the toy
/// family alone, no other family; over every family, each one's flag.
#[test]
fn the_kubernetes_refusals_name_the_registered_families_clusters() {
    use crate::face::Entry;
    let toy: &dyn Registered = &Entry::<crate::toy::Toy>::NEW;
    let scratch = Scratch::new();
    let refusal = |families: &[&dyn Registered], args: &str| {
        let e = scratch
            .resolve_over(families, args, "", &Env::default())
            .expect_err(args);
        assert!(
            matches!(
                e,
                SettingsError::KubeconfigAlone { .. } | SettingsError::LeaderElect { .. }
            ),
            "{args}: {e:?}"
        );
        e.to_string()
    };
    let toy_only: &[&dyn Registered] = &[toy];
    let cases: &[(&[&dyn Registered], &str, &str)] = &[
        (
            toy_only,
            "--toy-room {dir}/a.json --kubeconfig {dir}/kc status",
            "--kubeconfig and --kube-context name a Kubernetes cluster, and no family here reads \
             one: leave them out",
        ),
        (
            toy_only,
            "--toy-room {dir}/a.json run --loop --leader-elect",
            "--leader-elect elects among replicas of `run --loop` with a Lease in a Kubernetes \
             cluster: no family here has a Lease to elect with: leave --leader-elect out",
        ),
        (
            FAMILIES,
            "--cluster {dir}/a.json --kube-context c status",
            "--kubeconfig and --kube-context name the management cluster of --kube (metal3), or \
             the cluster of the Nodes of a machines fleet (--sabakan, --sabakan-file): add one \
             of them",
        ),
        (
            FAMILIES,
            "--cluster {dir}/a.json run --loop --leader-elect",
            "--leader-elect elects among replicas of `run --loop` with a Lease in a Kubernetes \
             cluster: add --kube (metal3) or --kubeconfig (the Nodes of a machines fleet); a \
             fleet file or a ganeti fleet has no Lease to elect with",
        ),
        (
            FAMILIES,
            "--cluster {dir}/a.json run --leader-elect",
            "--leader-elect elects among replicas of `run --loop` with a Lease in a Kubernetes \
             cluster: add --loop, and --kube (metal3) or --kubeconfig (the Nodes of a machines \
             fleet); a fleet file or a ganeti fleet has no Lease to elect with",
        ),
    ];
    for (families, args, want) in cases {
        let said = refusal(families, args);
        assert_eq!(said, *want, "{args}");
        if families.len() == 1 {
            let words = crate::face::words::family_words(&said);
            assert!(words.is_empty(), "{args}: names {words:?}");
        }
    }
}
