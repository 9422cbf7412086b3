//! The sabakan client against the fake sabakan (crates/testsupport, `sabakan`): CKE's search with the
//! machines family's variables, the REST list, label writes, what each failure says, and
//! how many requests a pass costs.

use autorepair::sabakan::State as ModelState;
use autorepair::sabakan::client::{ClientError, Endpoint, Sabakan, Variables};
use jiff::Timestamp;
use serde_json::{Value, json};
use std::time::Duration;
use testsupport::sabakan::{FakeSabakan, Fault, State, machine};

const NOW: &str = "2026-06-01T00:00:00Z";

fn now() -> Timestamp {
    NOW.parse().unwrap()
}

fn fleet() -> FakeSabakan {
    let s = FakeSabakan::start();
    s.set_now(NOW);
    s.insert(machine("boot1").role("boot"));
    s.insert(machine("bootbad").role("boot").state(State::Unhealthy));
    s.insert(
        machine("cs1")
            .rack(1)
            .ipv4("10.69.1.1")
            .bmc_type("iDRAC-9")
            .state(State::Unhealthy)
            .since("2026-05-31T23:00:00Z")
            .label("product", "R640"),
    );
    s.insert(machine("cs2").rack(1).state(State::Unreachable));
    s.insert(machine("cs3").rack(2));
    s.insert(machine("cs4").rack(2).state(State::Retired));
    s.insert(machine("cs5").rack(2).state(State::Updating));
    s
}

fn client(s: &FakeSabakan) -> Sabakan {
    Sabakan::new(&Endpoint {
        url: s.url().to_owned(),
        timeout: Duration::from_secs(5),
        ca_file: None,
    })
    .unwrap()
}

fn serials(ms: &[autorepair::sabakan::Machine]) -> Vec<&str> {
    ms.iter().map(|m| m.serial.as_str()).collect()
}

/// The machines family's default (CKE's sabakan/query.go): UNHEALTHY and UNREACHABLE, not boot,
/// with both variables sent as CKE's Go code marshals them.
#[test]
fn auto_repair_search_selects_broken_non_boot_machines() {
    let s = fleet();
    let c = client(&s);
    let got = c
        .search_machines(Some(&Variables::auto_repair()), now())
        .unwrap();
    assert_eq!(serials(&got), ["cs1", "cs2"]);
    let cs1 = &got[0];
    assert_eq!(cs1.address(), Some("10.69.1.1"));
    assert_eq!(cs1.bmc_type, "iDRAC-9");
    assert_eq!(cs1.state, ModelState::Unhealthy);
    assert_eq!(cs1.duration, 3600.0);
    assert_eq!(cs1.labels, [("product".to_owned(), "R640".to_owned())]);

    let req = &s.requests()[0];
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("POST", "/graphql")
    );
    assert_eq!(req.user, "autorepair");
    let body: Value = serde_json::from_str(&req.body).unwrap();
    assert_eq!(
        body["variables"],
        json!({
            "having": {"labels": null, "racks": null, "roles": null,
                       "states": ["UNHEALTHY", "UNREACHABLE"]},
            "notHaving": {"labels": null, "racks": null, "roles": ["boot"], "states": null}
        })
    );
}

#[test]
fn search_omitted_versus_null_variables() {
    let s = fleet();
    let c = client(&s);
    // Omitted: the query's defaults leave out boot and RETIRED machines.
    let got = c.search_machines(None, now()).unwrap();
    assert_eq!(serials(&got), ["cs1", "cs2", "cs3", "cs5"]);
    // `{}`: both sent as null, nothing left out.
    let all = Variables::parse("{}").unwrap();
    let got = c.search_machines(Some(&all), now()).unwrap();
    assert_eq!(got.len(), 7);
    let days = Variables::parse(r#"{"having": {"minDaysBeforeRetire": 2000}}"#).unwrap();
    assert!(c.search_machines(Some(&days), now()).unwrap().is_empty());
}

#[test]
fn rest_list_with_query_and_sabakans_404_for_none() {
    let s = fleet();
    let c = client(&s);
    let got = c
        .list_machines(&[("without-role", "boot"), ("rack", "1")], now())
        .unwrap();
    assert_eq!(serials(&got), ["cs1", "cs2"]);
    assert_eq!(got[0].duration, 3600.0);
    assert_eq!(got[1].state, ModelState::Unreachable);
    assert!(
        c.list_machines(&[("role", "gpu")], now())
            .unwrap()
            .is_empty()
    );
    assert_eq!(s.requests()[0].query, "without-role=boot&rack=1");
}

#[test]
fn labels_written_and_removed() {
    let s = fleet();
    let c = client(&s);
    c.put_label("cs1", "autorepair.step", "s1-running").unwrap();
    c.put_label("cs1", "autorepair.note", "").unwrap();
    assert_eq!(s.labels("cs1")["autorepair.step"], "s1-running");
    assert_eq!(s.labels("cs1")["autorepair.note"], "");
    assert!(c.delete_label("cs1", "autorepair.step").unwrap());
    // Already gone: the label is absent, as asked.
    assert!(!c.delete_label("cs1", "autorepair.step").unwrap());
    assert!(!c.delete_label("vanished", "autorepair.step").unwrap());
    assert!(!s.labels("cs1").contains_key("autorepair.step"));
}

/// A pass: one search, then one request per label write, nothing else.
#[test]
fn requests_are_constant_plus_one_per_label_write() {
    let s = fleet();
    let c = client(&s);
    for writes in [0usize, 1, 5] {
        s.clear_requests();
        let before = c.requests();
        let broken = c
            .search_machines(Some(&Variables::auto_repair()), now())
            .unwrap();
        for i in 0..writes {
            let m = &broken[i % broken.len()];
            c.put_label(&m.serial, "autorepair.seq", &i.to_string())
                .unwrap();
        }
        assert_eq!(c.requests() - before, 1 + writes as u64);
        assert_eq!(s.requests().len(), 1 + writes);
        assert_eq!(s.writes().len(), writes);
    }
}

#[test]
fn refused_labels_name_serial_label_and_rule() {
    let s = fleet();
    let c = client(&s);
    let cases: [(&str, &str, Option<&str>, &str); 4] = [
        ("cs1", "cke.cybozu.com/x", Some("v"), "invalid label name"),
        ("cs1", "-bad", Some("v"), "invalid label name"),
        ("cs1", "fine", Some("not fine"), "invalid label value"),
        ("cs1", "bad_", None, "invalid label name"),
    ];
    for (serial, name, value, reason) in cases {
        let e = match value {
            Some(v) => c.put_label(serial, name, v).unwrap_err(),
            None => c.delete_label(serial, name).unwrap_err(),
        };
        assert!(matches!(e, ClientError::BadLabel { .. }), "{e:?}");
        let msg = e.to_string();
        for part in [serial, name, reason, "HTTP 400", "1-63 characters"] {
            assert!(msg.contains(part), "{msg:?} lacks {part:?}");
        }
        if let Some(v) = value {
            assert!(msg.contains(v), "{msg}");
        }
    }
    // The `/` stayed in the name: sabakan saw one label, not a longer path.
    assert!(
        s.requests()
            .iter()
            .any(|r| r.path == "/api/v1/labels/cs1/cke.cybozu.com%2Fx")
    );
    assert_eq!(s.labels("cs1").len(), 1);
}

#[test]
fn unknown_serial_says_so() {
    let s = fleet();
    let c = client(&s);
    let e = c.put_label("SN-GONE", "a", "b").unwrap_err();
    assert!(matches!(e, ClientError::NoMachine { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("\"SN-GONE\"") && msg.contains("HTTP 404"),
        "{msg}"
    );
}

#[test]
fn failures_are_typed_and_name_the_url() {
    let s = fleet();
    let c = Sabakan::new(&Endpoint {
        url: s.url().to_owned(),
        timeout: Duration::from_millis(500),
        ca_file: None,
    })
    .unwrap();
    let graphql = format!("{}/graphql", s.url());
    let search = || c.search_machines(None, now()).unwrap_err();
    let cases: Vec<(Fault, &str, &str)> = vec![
        (
            Fault::garbage("<html>gateway</html>"),
            "Garbage",
            "not JSON",
        ),
        (
            Fault::garbage(r#"{"data":{}}"#),
            "Garbage",
            "without searchMachines",
        ),
        (
            Fault::garbage(r#"{"data":{"searchMachines":[{"spec":{}}]}}"#),
            "Garbage",
            "machine [0]",
        ),
        (
            Fault::garbage(r#"{"errors":[{"message":"boom"}],"data":null}"#),
            "Query",
            "boom",
        ),
        (
            Fault::status(502),
            "Status",
            "HTTP 502: injected by the fake",
        ),
        (Fault::hangup(), "Unreachable", "no answer"),
        (
            Fault::delay(Duration::from_secs(2)),
            "Unreachable",
            "no answer",
        ),
    ];
    for (fault, kind, want) in cases {
        s.fault(fault.on_path("/graphql"));
        let e = search();
        assert!(format!("{e:?}").starts_with(kind), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains(want) && msg.contains(&graphql), "{msg}");
    }
    s.fault(Fault::garbage(r#"{"not": "a list"}"#).on_path("/api/v1/machines"));
    let e = c.list_machines(&[], now()).unwrap_err();
    assert!(matches!(e, ClientError::Garbage { .. }), "{e:?}");

    s.read_only(true);
    let e = c.put_label("cs1", "a", "b").unwrap_err();
    assert!(matches!(e, ClientError::Forbidden { .. }), "{e:?}");
    assert!(e.to_string().contains("allowed-ips"), "{e}");
}

#[test]
fn no_credentials_in_messages() {
    let s = fleet();
    let with_user = s.url().replace("http://", "http://admin:hunter2@");
    let c = Sabakan::new(&Endpoint::new(&with_user)).unwrap();
    s.fault(Fault::status(500));
    let e = c.search_machines(None, now()).unwrap_err().to_string();
    assert!(e.contains("HTTP 500"), "{e}");
    assert!(!e.contains("hunter2") && !e.contains("admin"), "{e}");
    s.fault(Fault::hangup());
    let e = c.put_label("cs1", "a", "b").unwrap_err().to_string();
    assert!(!e.contains("hunter2"), "{e}");
}

#[test]
fn unusable_ca_file_is_named() {
    let e = Sabakan::new(&Endpoint {
        url: "https://sabakan.example".into(),
        timeout: Duration::from_secs(1),
        ca_file: Some("/nonexistent/ca.pem".into()),
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("/nonexistent/ca.pem"), "{e}");
}

/// TLS is verified: a server whose certificate no trusted CA signed is refused, and trusted
/// with its CA given. (fake-kube serves HTTPS with a test certificate; its 404 for
/// `/graphql` proves the request went through.)
#[test]
fn https_is_verified_against_the_given_ca() {
    let kube = testsupport::kube::FakeKube::builder().tls().start();
    let url = kube.url().replace("127.0.0.1", "localhost");
    assert!(url.starts_with("https://"), "{url}");
    let untrusted = Sabakan::new(&Endpoint::new(&url)).unwrap();
    let e = untrusted.search_machines(None, now()).unwrap_err();
    assert!(matches!(e, ClientError::Unreachable { .. }), "{e:?}");
    assert!(e.to_string().to_lowercase().contains("certificate"), "{e}");

    let trusted = Sabakan::new(&Endpoint {
        url,
        timeout: Duration::from_secs(5),
        ca_file: Some(testsupport::CA_FILE.into()),
    })
    .unwrap();
    let e = trusted.search_machines(None, now()).unwrap_err();
    assert!(
        matches!(e, ClientError::Status { status: 404, .. }),
        "{e:?}"
    );
}
