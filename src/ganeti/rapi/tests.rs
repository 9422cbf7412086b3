//! Parsing of answers recorded from a real Ganeti 3.0.2 cluster (contrib/testbed/README.md).

use super::*;
use crate::transport::{self, TransportError};

const ID: &str = "11111111-2222-3333-4444-555555555555";

fn failover_job() -> Value {
    json!({"id": 12, "status": "success", "summary": ["INSTANCE_FAILOVER(inst4.example.test)"],
        "opstatus": ["success"], "opresult": [null],
        "ops": [{"OP_ID": "OP_INSTANCE_FAILOVER", "instance_name": "inst4.example.test",
            "reason": [["gnt:user", format!("autorepair:{ID}"), 1795307002104257280u64],
                       ["gnt:library:rlib2:instances_name_failover", "", 1795307002104268544u64],
                       ["gnt:opcode:instance_failover", "job=12;index=0", 1795307002106489000u64]]}],
        "received_ts": [1795307002, 106489], "end_ts": [1795307002, 547945]})
}

#[test]
fn jobs_are_read_with_their_repair_id_operation_and_end() {
    let j = job_from_rapi(&failover_job()).unwrap();
    assert_eq!(j.id, 12);
    assert_eq!(j.status, Some(JobStatus::Success));
    assert_eq!(j.repair_id(), Some(ID));
    assert_eq!(j.instance.as_deref(), Some("inst4.example.test"));
    assert_eq!(j.op.map(|o| o.kind()), Some(OpKind::Failover));
    assert_eq!(j.end_ts, Some(1795307002));
}

#[test]
fn an_unknown_job_is_all_nulls_and_errors_keep_their_code() {
    let unknown = json!({"id": null, "status": null, "ops": null, "opresult": null});
    assert!(job_from_rapi(&unknown).is_none());
    let mut v = failover_job();
    v["status"] = json!("error");
    v["opresult"] = json!([[
        "OpPrereqError",
        [
            "Can't compute nodes using iallocator 'hail': Request failed: Can't find any good node: ",
            "insufficient_resources"
        ]
    ]]);
    let j = job_from_rapi(&v).unwrap();
    assert!(j.failed_for_lack_of_resources());
    // A job with a status we do not know is treated as unknown, not as finished.
    v["status"] = json!("frobnicated");
    assert_eq!(job_from_rapi(&v).unwrap().status, None);
}

#[test]
fn operations_are_recognised_from_their_opcodes() {
    let cases = [
        (
            vec![
                "OP_INSTANCE_SHUTDOWN",
                "OP_INSTANCE_REINSTALL",
                "OP_INSTANCE_STARTUP",
            ],
            Some(OpKind::Reinstall),
        ),
        (
            vec!["OP_INSTANCE_RECREATE_DISKS"],
            Some(OpKind::RecreateDisks),
        ),
        (
            vec!["OP_INSTANCE_REPLACE_DISKS"],
            Some(OpKind::ReplaceDisks),
        ),
        (vec!["OP_INSTANCE_MIGRATE"], Some(OpKind::Migrate)),
        (vec!["OP_INSTANCE_FAILOVER"], Some(OpKind::Failover)),
        (vec!["OP_TAGS_SET"], None),
        (vec!["OP_NODE_SET_PARAMS"], None),
    ];
    for (ids, want) in cases {
        let ops: Vec<Value> = ids.iter().map(|i| json!({"OP_ID": i})).collect();
        assert_eq!(op_of(&ops).map(|o| o.kind()), want, "{ids:?}");
    }
}

#[test]
fn tag_jobs_name_their_instance_so_a_queued_tag_write_blocks_a_second_start() {
    let v = json!({"id": 30, "status": "queued", "ops": [{"OP_ID": "OP_TAGS_SET", "kind": "instance",
        "name": "inst1.example.test", "tags": ["x"], "reason": [["gnt:user", format!("autorepair:{ID}"), 1]]}]});
    let j = job_from_rapi(&v).unwrap();
    assert_eq!(
        (j.instance.as_deref(), j.op.is_none(), j.repair_id()),
        (Some("inst1.example.test"), true, Some(ID))
    );
}

#[test]
fn reinstalls_without_a_reason_are_attributed_to_the_preceding_recreate() {
    let job = |id: u64, op: Op, inst: &str, reason: Option<&str>| Job {
        id,
        status: Some(JobStatus::Success),
        instance: Some(inst.into()),
        op: Some(op),
        reason: reason.map(str::to_owned),
        ..Job::default()
    };
    let recreate = || Op::RecreateDisks {
        nodes: vec![],
        iallocator: None,
    };
    let mut jobs = vec![
        job(
            5,
            recreate(),
            "a",
            Some("autorepair:11111111-0000-4000-8000-000000000000"),
        ),
        job(7, recreate(), "a", Some(&format!("autorepair:{ID}"))),
        job(8, Op::Reinstall, "b", None),
        job(9, Op::Reinstall, "a", None),
        job(4, Op::Reinstall, "a", None),
    ];
    attribute_reinstalls(&mut jobs);
    assert_eq!(
        jobs[3].repair_id(),
        Some(ID),
        "the latest earlier recreate of the same instance"
    );
    assert_eq!(jobs[2].repair_id(), None, "another instance");
    assert_eq!(jobs[4].repair_id(), None, "submitted before any recreate");
}

#[test]
fn reasons_and_job_ids() {
    assert_eq!(
        ganeti_reason(&format!("autorepair:{ID}")),
        format!("autorepair:{ID}")
    );
    assert_eq!(
        ganeti_reason("timed suspend is over"),
        "autorepair: timed suspend is over"
    );
    // A human reason is never mistaken for a repair id.
    let j = Job {
        reason: Some(ganeti_reason("timed suspend is over")),
        ..Job::default()
    };
    assert_eq!(j.repair_id(), None);
    assert_eq!(job_id(&json!(23)), Some(23));
    assert_eq!(job_id(&json!("23")), Some(23));
    assert_eq!(job_id(&json!({"id": 1})), None);
}

#[test]
fn the_password_comes_from_a_file_and_never_shows() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pw");
    std::fs::write(&file, "s3cret\n").unwrap();
    assert_eq!(read_password(Some(&file)).unwrap(), "s3cret");
    // Read again each time: a connect after a rotation gets the new one.
    let from_file = Password::File(file.clone());
    std::fs::write(&file, "rotated\n").unwrap();
    assert_eq!(from_file.read().unwrap(), "rotated");
    std::fs::write(&file, "\n").unwrap();
    assert!(
        read_password(Some(&file))
            .unwrap_err()
            .to_string()
            .contains("empty")
    );
    let e = Endpoint {
        url: "https://x:5080".into(),
        user: "u".into(),
        password: Password::Given("s3cret".into()),
        ca_file: None,
        insecure: false,
        timeout: Duration::from_secs(1),
        run_status: false,
    };
    assert!(!format!("{e:?}").contains("s3cret"));
}

#[test]
fn plain_http_and_bad_certificate_files_are_refused_with_a_clear_error() {
    let endpoint = |url: &str, ca: Option<std::path::PathBuf>| Endpoint {
        url: url.into(),
        user: "u".into(),
        password: Password::Given("p".into()),
        ca_file: ca,
        insecure: false,
        timeout: Duration::from_secs(1),
        run_status: false,
    };
    let e = Rapi::connect(&endpoint("http://x:5080", None))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("https://"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("ca.pem");
    std::fs::write(&bad, "not a certificate").unwrap();
    let e = Rapi::connect(&endpoint("https://x:5080", Some(bad.clone())))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("ca.pem") && e.contains("no certificate"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// The transport against servers on loopback: the fake RAPI of crates/testsupport (rustls, one
// connection per request), a closed port, a listener that never answers, and a name under
// .invalid.

use std::net::TcpListener;
use std::sync::Arc;
use testsupport::rapi::FakeRapi;

/// `server.crt` is the certificate the fake RAPI serves (crates/testsupport); the others are
/// in testdata/ (made with openssl for 127.0.0.1 and localhost).
fn testdata(name: &str) -> std::path::PathBuf {
    match name {
        "server.crt" => testsupport::CA_FILE.into(),
        _ => std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/ganeti/rapi/testdata")
            .join(name),
    }
}

/// The status and body for a request: method, path with query.
type Answer = Arc<dyn Fn(&str, &str) -> (u16, String) + Send + Sync>;

/// The fake RAPI on 127.0.0.1 answering each request with `answer`'s status and body, after
/// `delay`, speaking only `versions`; its URL and the handle that keeps it running.
fn https_server(
    versions: &'static [&'static rustls::SupportedProtocolVersion],
    delay: Duration,
    answer: Answer,
) -> (String, FakeRapi) {
    let rapi = FakeRapi::builder()
        .versions(versions)
        .delay(delay)
        .start(Box::new(move |seen| {
            let last = seen.last().expect("the request being answered");
            answer(&last.method, &last.path)
        }));
    (rapi.url().to_owned(), rapi)
}

fn fixed(status: u16, body: &str) -> Answer {
    let body = body.to_owned();
    Arc::new(move |_, _| (status, body.clone()))
}

fn rapi_at(url: &str, ca: Option<&str>) -> Rapi {
    let mut r = Rapi::connect(&Endpoint {
        url: url.into(),
        user: "reader".into(),
        password: Password::Given("p".into()),
        ca_file: ca.map(testdata),
        insecure: false,
        timeout: Duration::from_millis(1500),
        run_status: true,
    })
    .unwrap();
    r.retry.retries = 0;
    r
}

const BOTH: &[&rustls::SupportedProtocolVersion] = rustls::DEFAULT_VERSIONS;
static TLS13_ONLY: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS13];

#[test]
fn the_pinned_certificate_is_accepted_and_a_tls13_only_server_is_spoken_to_as_well() {
    for versions in [BOTH, &TLS13_ONLY[..]] {
        let (url, _server) = https_server(versions, Duration::ZERO, fixed(200, r#"{"name":"c"}"#));
        let rapi = rapi_at(&url, Some("server.crt"));
        assert_eq!(
            rapi.get("/2/info").unwrap(),
            json!({"name": "c"}),
            "{versions:?}"
        );
    }
}

/// What a user sees for each way of not reaching the RAPI: the class, and words the message
/// must hold (the URL always).
#[test]
fn each_transport_failure_has_its_own_message_with_the_cause() {
    let closed = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("https://127.0.0.1:{}", l.local_addr().unwrap().port())
    };
    // Accepted by the kernel, never answered: the TLS handshake waits forever.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("https://127.0.0.1:{}", silent.local_addr().unwrap().port());
    let (tls_url, tls_seen) = https_server(BOTH, Duration::ZERO, fixed(200, "{}"));
    /// (case, URL, CA file, error class, words in the message)
    type Case<'a> = (&'a str, String, Option<&'a str>, &'a str, &'a [&'a str]);
    let cases: Vec<Case> = vec![
        (
            "refused",
            closed,
            None,
            "Refused",
            &["refused", "ganeti-rapi", "os error"],
        ),
        // The connect timeout is rapi.timeout here too (it is the shorter), and a TLS
        // handshake that never ends is the connect's: whichever of the two equal timers fires
        // first names it (under load, either), each with the limit and the setting.
        (
            "timeout",
            silent_url,
            None,
            "Timeout|Connect",
            &["within 1.5s", "rapi.timeout"],
        ),
        (
            "dns",
            "https://rapi.nonexistent.invalid:5080".into(),
            None,
            "Dns",
            &["cannot resolve rapi.nonexistent.invalid", "--rapi"],
        ),
        (
            "wrong CA",
            tls_url.clone(),
            Some("other.crt"),
            "Tls",
            &[
                "TLS handshake",
                "other.crt",
                "renewed",
                "--rapi-ca",
                "not retried",
            ],
        ),
        (
            "no CA",
            tls_url.clone(),
            None,
            "Tls",
            &["No --rapi-ca was given", "rapi.pem"],
        ),
    ];
    for (name, url, ca, class, words) in cases {
        let mut rapi = rapi_at(&url, ca);
        rapi.retry.retries = 2;
        let e = match name {
            // Nothing retries these, so retries cost no time here.
            "refused" | "timeout" => {
                rapi.retry.retries = 0;
                rapi.get("/2/info").unwrap_err()
            }
            _ => rapi.get("/2/info").unwrap_err(),
        };
        let text = e.to_string();
        let failure = TransportError::of(&e).expect("a transport failure");
        assert!(
            class
                .split('|')
                .any(|c| format!("{failure:?}").starts_with(c)),
            "{name}: {class} expected, got {e:?}"
        );
        assert!(text.contains(&format!("{url}/2/info")), "{name}: {text}");
        assert!(!text.contains("error sending request"), "{name}: {text}");
        for w in words {
            assert!(text.contains(w), "{name}: {w:?} missing from: {text}");
        }
        assert_eq!(
            failure.is_transient(),
            matches!(name, "refused" | "timeout"),
            "{name}"
        );
    }
    assert_eq!(
        tls_seen.connections(),
        2,
        "a refused certificate is not retried"
    );
    drop(silent);
}

#[test]
fn http_errors_say_which_access_the_call_needs() {
    let forbidden = r#"{"code":403,"message":"Forbidden","explain":""}"#;
    let cases = [
        (reqwest::Method::GET, 403, forbidden, "the `read` option"),
        (
            reqwest::Method::PUT,
            403,
            forbidden,
            "\"reader\" may not write: give it the `write` option",
        ),
        (
            reqwest::Method::GET,
            401,
            r#"{"code":401,"message":"Unauthorized"}"#,
            "password file",
        ),
        (reqwest::Method::GET, 502, "Bad Gateway", "ganeti-luxid"),
    ];
    for (method, status, body, hint) in cases {
        let (url, seen) = https_server(BOTH, Duration::ZERO, fixed(status, body));
        let mut rapi = rapi_at(&url, Some("server.crt"));
        rapi.retry.retries = 1;
        let e = if method == reqwest::Method::GET {
            rapi.get("/2/query/instance").unwrap_err()
        } else {
            rapi.write(method.clone(), "/2/instances/x/tags", &[("tag", "t")], None)
                .unwrap_err()
        };
        let text = e.to_string();
        match (&method, status) {
            // Every write would be refused alike: the executor stops the pass at this one.
            (&reqwest::Method::PUT, 403) => {
                assert!(matches!(e, BackendError::NoWriteAccess(_)), "{e:?}")
            }
            _ => assert!(transport::http_status(&e) == Some(status), "{e:?}"),
        }
        assert!(text.contains(hint) && text.contains(&url), "{text}");
        let tries = if status >= 500 { 2 } else { 1 };
        assert_eq!(
            seen.connections(),
            tries,
            "{method} {status}: only server errors on reads are retried"
        );
    }
}

fn cluster_answers(query_status: u16) -> Answer {
    Arc::new(move |_, path| {
        let p = path.split('?').next().unwrap_or("");
        let ok = |v: Value| (200, v.to_string());
        match p {
            "/2/info" => ok(json!({"name": "c.example.test", "tags": []})),
            "/2/groups" => ok(json!([{"name": "default", "uuid": "g1", "tags": []}])),
            "/2/nodes" => ok(json!([
                {"name": "n1", "offline": false, "drained": false, "group.uuid": "g1", "tags": [],
                 "pinst_list": ["a"], "sinst_list": ["b"]},
                {"name": "n2", "offline": true, "drained": false, "group.uuid": "g1", "tags": [],
                 "pinst_list": ["b"], "sinst_list": []}])),
            "/2/query/instance" | "/2/query/node" if query_status != 200 => {
                (query_status, r#"{"code":403,"message":"Forbidden"}"#.into())
            }
            "/2/query/node" => ok(json!({
                "fields": NODE_FIELDS,
                "data": [
                    [[0, "n1"], [0, false], [0, false], [0, true], [0, "g1"], [0, []],
                     [0, ["a"]], [0, ["b"]], [0, 1700000000.5]],
                    [[0, "n2"], [0, true], [0, false], [0, true], [0, "g1"], [0, []],
                     [0, ["b"]], [0, []], [0, 1700000000.5]]]})),
            "/2/query/instance" if path.ends_with("fields=name,status") => ok(json!({
                "fields": ["name", "status"],
                "data": [[[0, "a"], [0, "running"]], [[0, "b"], [0, "ERROR_nodeoffline"]]]})),
            "/2/query/instance" => ok(json!({
                "fields": QUERY_FIELDS,
                "data": [
                    [[0, "a"], [0, ["x"]], [0, "up"], [0, "diskless"]],
                    [[0, "b"], [0, [format!("ganeti:watcher:autorepair:pending:failover:{ID}:1700000000:7+8")]], [0, "up"], [0, "drbd"]]]})),
            "/2/instances" => ok(json!([
                {"name": "a", "pnode": "n1", "snodes": [], "tags": ["x"], "admin_state": "up",
                 "disk_template": "diskless", "status": "running"},
                {"name": "b", "pnode": "n2", "snodes": ["n1"], "admin_state": "up",
                 "tags": [format!("ganeti:watcher:autorepair:pending:failover:{ID}:1700000000:7+8")],
                 "disk_template": "drbd", "status": "ERROR_nodeoffline"}])),
            "/2/jobs" => ok(json!([])),
            p if p.starts_with("/2/jobs/") => {
                let id: u64 = p["/2/jobs/".len()..].parse().unwrap();
                let mut j = failover_job();
                j["id"] = json!(id);
                ok(j)
            }
            _ => (404, r#"{"message":"no such resource"}"#.into()),
        }
    })
}

#[test]
fn the_snapshot_has_run_status_and_placement_for_write_read_and_plain_users() {
    // 200: a user with the `read` or `write` option; 403: a user with neither, who may not
    // use the query resource and gets the same snapshot from /2/instances?bulk=1.
    for query_status in [200, 403] {
        let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
        let base = cluster_answers(query_status);
        let record = asked.clone();
        let answer: Answer = Arc::new(move |m, path| {
            record.lock().unwrap().push(path.to_owned());
            base(m, path)
        });
        let (url, _server) = https_server(BOTH, Duration::ZERO, answer);
        let mut rapi = rapi_at(&url, Some("server.crt"));
        let snap = rapi.snapshot().unwrap();
        // The bulk resources ask every node daemon for live data: only for plain users.
        let mut bulk: Vec<String> = (asked.lock().unwrap().iter())
            .filter(|p| {
                p.ends_with("bulk=1") && !p.starts_with("/2/groups") && !p.starts_with("/2/jobs")
            })
            .cloned()
            .collect();
        let expected_bulk: &[&str] = match query_status {
            200 => &[],
            _ => &["/2/instances?bulk=1", "/2/nodes?bulk=1"],
        };
        bulk.sort();
        assert_eq!(bulk, expected_bulk, "query answered {query_status}");
        let row = |i: &Instance| {
            (
                i.name.clone(),
                i.pnode.clone(),
                i.snodes.clone(),
                i.status.clone(),
                i.disk_template.clone(),
            )
        };
        let rows: Vec<_> = snap.instances.iter().map(row).collect();
        let s = |x: &str| x.to_owned();
        assert_eq!(
            rows,
            vec![
                (s("a"), s("n1"), vec![], s("running"), s("diskless")),
                (
                    s("b"),
                    s("n2"),
                    vec![s("n1")],
                    s("ERROR_nodeoffline"),
                    s("drbd")
                ),
            ],
            "query answered {query_status}"
        );
        let mut ids: Vec<u64> = snap.jobs.iter().map(|j| j.id).collect();
        ids.sort();
        assert_eq!(ids, vec![7, 8], "the jobs the pending tag names are read");
        assert_eq!(snap.nodes.iter().filter(|n| n.offline).count(), 1);
    }
}

#[test]
fn reads_run_concurrently_but_never_more_than_the_bound() {
    // 20 pending jobs to read on top of the five snapshot reads: ten instances with a
    // pending tag naming two jobs each (a Ganeti tag holds at most 128 characters).
    let rows: Vec<Value> = (0..10)
        .map(|i| {
            let tag = format!(
                "ganeti:watcher:autorepair:pending:failover:{ID}:1700000000:{}+{}",
                100 + 2 * i,
                101 + 2 * i
            );
            json!([[0, format!("i{i}")], [0, [tag]], [0, "up"], [0, "diskless"]])
        })
        .collect();
    let base = cluster_answers(200);
    let answer: Answer = Arc::new(move |m, path| {
        if path.ends_with(&QUERY_FIELDS.join(",")) {
            let v = json!({"fields": QUERY_FIELDS, "data": rows});
            return (200, v.to_string());
        }
        base(m, path)
    });
    let (url, seen) = https_server(BOTH, Duration::from_millis(100), answer);
    let mut rapi = rapi_at(&url, Some("server.crt"));
    let snap = rapi.snapshot().unwrap();
    assert_eq!(snap.jobs.len(), 20);
    let most = seen.most_in_flight();
    assert!(
        (4..=PARALLEL_READS).contains(&most),
        "at most {most} requests were in flight at once"
    );
}

fn endpoint_at(url: &str, timeout: Duration) -> Endpoint {
    Endpoint {
        url: url.into(),
        user: "reader".into(),
        password: Password::Given("p".into()),
        ca_file: Some(testdata("server.crt")),
        insecure: false,
        timeout,
        run_status: false,
    }
}

/// The message names the limit that fired. A server that accepts TCP but never starts TLS
/// trips the connect timeout, shorter than the request's: the error says so (and that the
/// daemon hangs), not "did not answer within" the request's timeout with advice to raise it.
/// A server that connects but answers late trips the request's timeout, which may be raised.
#[test]
fn a_timeout_names_the_limit_that_fired_and_what_helps() {
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("https://127.0.0.1:{}", silent.local_addr().unwrap().port());
    let policy = RetryPolicy {
        retries: 0,
        connect_timeout: Duration::from_millis(300),
        ..RetryPolicy::default()
    };
    let rapi =
        Rapi::connect_with(&endpoint_at(&silent_url, Duration::from_secs(5)), policy).unwrap();
    let started = Instant::now();
    let e = rapi.get("/2/info").unwrap_err();
    let text = e.to_string();
    assert!(started.elapsed() < Duration::from_secs(3), "{text}");
    assert!(
        matches!(TransportError::of(&e), Some(TransportError::Connect { .. })),
        "{e:?}"
    );
    for words in [
        "TLS handshake did not finish within 300ms",
        "connect timeout",
        "ganeti-rapi",
    ] {
        assert!(text.contains(words), "{words:?} missing: {text}");
    }
    assert!(
        !text.contains("within 5s") && !text.contains("raise"),
        "{text}"
    );
    assert!(transport::is_transient(&e));
    drop(silent);

    let (slow, _server) = https_server(BOTH, Duration::from_secs(3), fixed(200, "{}"));
    let rapi = Rapi::connect_with(&endpoint_at(&slow, Duration::from_millis(500)), policy).unwrap();
    let e = rapi.get("/2/info").unwrap_err();
    let text = e.to_string();
    assert!(
        matches!(TransportError::of(&e), Some(TransportError::Timeout { .. })),
        "{e:?}"
    );
    for words in ["did not answer within 500ms", "raise rapi.timeout"] {
        assert!(text.contains(words), "{words:?} missing: {text}");
    }
}

/// A request that fails slowly is not retried past the window; one that gave up ends the
/// retries of the connection (the pass): the next request is tried once. The error says how
/// many attempts were made over how long.
#[test]
fn retries_are_bounded_in_count_and_time_and_the_error_counts_them() {
    let (url, seen) = https_server(
        BOTH,
        Duration::from_millis(400),
        fixed(502, r#"{"message":"Bad Gateway"}"#),
    );
    let policy = RetryPolicy {
        retries: 3,
        first_pause: Duration::from_millis(10),
        window: Duration::from_secs(1),
        ..RetryPolicy::default()
    };
    let rapi = Rapi::connect_with(&endpoint_at(&url, Duration::from_secs(5)), policy).unwrap();
    let started = Instant::now();
    let e = rapi.get("/2/info").unwrap_err();
    let took = started.elapsed();
    let text = e.to_string();
    let tries = seen.connections();
    assert!((2..=3).contains(&tries), "{tries} attempts: {text}");
    assert!(took < Duration::from_millis(2500), "{took:?}: {text}");
    assert!(text.contains(&format!("({tries} attempts over ")), "{text}");
    let e = rapi.get("/2/groups").unwrap_err();
    assert_eq!(
        seen.connections(),
        tries + 1,
        "the service is down for this pass: tried once"
    );
    assert!(e.to_string().contains("(1 attempt over "), "{e}");
}
