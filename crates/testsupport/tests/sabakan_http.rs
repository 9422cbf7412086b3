//! The fake over real HTTP, as a client sees it: CKE's query and variables, sabakan's REST
//! statuses, faults and the request record.

use reqwest::blocking::Client;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use testsupport::sabakan::{FakeSabakan, Fault, State, machine};

/// The query CKE sends (cke sabakan/query.go), defaults included.
const CKE_QUERY: &str = r#"query ckeSearch($having: MachineParams = null, $notHaving: MachineParams = {
  roles: ["boot"]
  states: [RETIRED]
}) {
  searchMachines(having: $having, notHaving: $notHaving) {
    spec { serial labels { name value } rack indexInRack role ipv4 registerDate retireDate bmc { bmcType } }
    status { state duration }
  }
}"#;

const NOW: &str = "2026-06-01T00:00:00Z";

fn fleet() -> FakeSabakan {
    let s = FakeSabakan::start();
    s.set_now(NOW);
    s.insert(machine("boot1").role("boot").rack(0));
    s.insert(
        machine("cs1")
            .rack(1)
            .state(State::Unhealthy)
            .since("2026-05-31T23:00:00Z")
            .label("z", "1")
            .label("a", "2"),
    );
    s.insert(machine("cs2").rack(1).state(State::Unreachable));
    s.insert(machine("cs3").rack(2).state(State::Retired));
    s.insert(machine("ss1").rack(2).role("ss").bmc_type("iDRAC-9"));
    s.insert(machine("bootbad").role("boot").state(State::Unhealthy));
    s
}

fn graphql(s: &FakeSabakan, body: Value) -> (u16, Value) {
    let resp = Client::new()
        .post(format!("{}/graphql", s.url()))
        .json(&body)
        .send()
        .unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().unwrap())
}

fn serials(v: &Value) -> Vec<&str> {
    v["data"]["searchMachines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["spec"]["serial"].as_str().unwrap())
        .collect()
}

#[test]
fn cke_query_omitted_null_and_given_variables() {
    let s = fleet();
    let cases = [
        // Omitted: the declared defaults leave out boot and RETIRED machines.
        (json!({"query": CKE_QUERY}), vec!["cs1", "cs2", "ss1"]),
        // Explicit nulls replace the defaults: everything.
        (
            json!({"query": CKE_QUERY, "variables": {"having": null, "notHaving": null}}),
            vec!["boot1", "bootbad", "cs1", "cs2", "cs3", "ss1"],
        ),
        // An empty variables object is the same as none given.
        (
            json!({"query": CKE_QUERY, "variables": {}}),
            vec!["cs1", "cs2", "ss1"],
        ),
        // CKE's auto-repair variables, as Go marshals them.
        (
            json!({"query": CKE_QUERY, "variables": {
                "having": {"labels": null, "racks": null, "roles": null,
                           "states": ["UNHEALTHY", "UNREACHABLE"]},
                "notHaving": {"labels": null, "racks": null, "roles": ["boot"], "states": null}}}),
            vec!["cs1", "cs2"],
        ),
        (
            json!({"query": CKE_QUERY, "variables": {"having": {"racks": [2]}}}),
            vec!["ss1"],
        ),
        (
            json!({"query": CKE_QUERY, "variables": {"notHaving": {"labels": [{"name": "a", "value": "2"}]}}}),
            vec!["boot1", "bootbad", "cs2", "cs3", "ss1"],
        ),
    ];
    for (body, want) in cases {
        let (status, v) = graphql(&s, body.clone());
        assert_eq!(status, 200, "{v}");
        assert_eq!(serials(&v), want, "{body}");
    }
}

#[test]
fn selected_fields_only_in_graphql_spelling() {
    let s = fleet();
    let (_, v) = graphql(
        &s,
        json!({"query": CKE_QUERY, "variables": {"having": {"states": "UNHEALTHY"}, "notHaving": null}}),
    );
    let all = v["data"]["searchMachines"].as_array().unwrap();
    let cs1 = all.iter().find(|m| m["spec"]["serial"] == "cs1").unwrap();
    assert_eq!(
        cs1,
        &json!({
            "spec": {"serial": "cs1", "labels": [{"name": "a", "value": "2"}, {"name": "z", "value": "1"}],
                     "rack": 1, "indexInRack": 1, "role": "cs", "ipv4": ["10.0.1.1"],
                     "registerDate": "2025-01-01T00:00:00Z", "retireDate": "2030-01-01T00:00:00Z",
                     "bmc": {"bmcType": "IPMI-2.0"}},
            "status": {"state": "UNHEALTHY", "duration": 3600.0}
        })
    );
    let bootbad = all
        .iter()
        .find(|m| m["spec"]["serial"] == "bootbad")
        .unwrap();
    assert_eq!(bootbad["spec"]["labels"], Value::Null);

    // Aliases and literal arguments.
    let (_, v) = graphql(
        &s,
        json!({"query": "{ m: searchMachines(having: {roles: [\"ss\"]}) { spec { id: serial bmc { bmcType } } } }"}),
    );
    assert_eq!(
        v,
        json!({"data": {"m": [{"spec": {"id": "ss1", "bmc": {"bmcType": "iDRAC-9"}}}]}})
    );
}

#[test]
fn graphql_errors_as_gqlgen_sends_them() {
    let s = fleet();
    let code = |v: &Value| {
        v["errors"][0]["extensions"]["code"]
            .as_str()
            .map(str::to_owned)
    };
    for (body, status, want_code, want_msg) in [
        (
            json!({"query": CKE_QUERY, "variables": {"notHaving": {"states": ["retired"]}}}),
            422,
            Some("GRAPHQL_VALIDATION_FAILED"),
            "retired",
        ),
        (
            json!({"query": CKE_QUERY, "variables": {"having": {"role": ["cs"]}}}),
            422,
            Some("GRAPHQL_VALIDATION_FAILED"),
            "role",
        ),
        (
            json!({"query": "{ searchMachines { spec { serial nope } } }"}),
            422,
            Some("GRAPHQL_VALIDATION_FAILED"),
            "Cannot query field \"nope\" on type \"MachineSpec\"",
        ),
        (
            json!({"query": "{ searchMachines { spec } }"}),
            422,
            Some("GRAPHQL_VALIDATION_FAILED"),
            "selection of subfields",
        ),
        (
            json!({"query": "{ deleteEverything }"}),
            422,
            Some("GRAPHQL_VALIDATION_FAILED"),
            "Cannot query field \"deleteEverything\" on type \"Query\"",
        ),
        (
            json!({"query": "subscription { searchMachines { spec { serial } } }"}),
            422,
            Some("GRAPHQL_VALIDATION_FAILED"),
            "subscriptions",
        ),
        (
            json!({"query": "{ searchMachines { spec { serial } }"}),
            422,
            Some("GRAPHQL_PARSE_FAILED"),
            "Expected",
        ),
        (
            json!({"query": "{ machine(serial: \"nope\") { spec { serial } } }"}),
            200,
            None,
            "not found",
        ),
    ] {
        let (got, v) = graphql(&s, body.clone());
        assert_eq!(got, status, "{body}: {v}");
        assert_eq!(code(&v).as_deref(), want_code, "{v}");
        assert!(
            v["errors"][0]["message"]
                .as_str()
                .unwrap()
                .contains(want_msg),
            "{body}: {v}"
        );
        assert_eq!(v["data"], Value::Null);
    }
    let resp = Client::new()
        .post(format!("{}/graphql", s.url()))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
}

#[test]
fn set_machine_state_mutation_follows_transitions() {
    let s = fleet();
    let m = |serial: &str, state: &str| {
        json!({"query": "mutation($s: ID!, $st: MachineState!) { setMachineState(serial: $s, state: $st) { state } }",
               "variables": {"s": serial, "st": state}})
    };
    let (_, v) = graphql(&s, m("cs1", "HEALTHY"));
    assert_eq!(
        v,
        json!({"data": {"setMachineState": {"state": "HEALTHY"}}})
    );
    assert_eq!(s.machine("cs1").unwrap().state, State::Healthy);
    let (_, v) = graphql(&s, m("cs1", "UNINITIALIZED"));
    assert_eq!(
        v["errors"][0]["extensions"]["type"],
        "INVALID_STATE_TRANSITION"
    );
    assert_eq!(
        v["errors"][0]["message"],
        "transition from [ healthy ] to [ uninitialized ] is forbidden"
    );
    assert_eq!(s.writes().len(), 2);
}

fn rest(s: &FakeSabakan, method: &str, path: &str, body: &str) -> (u16, String) {
    let resp = Client::new()
        .request(method.parse().unwrap(), format!("{}{path}", s.url()))
        .body(body.to_owned())
        .send()
        .unwrap();
    (resp.status().as_u16(), resp.text().unwrap())
}

#[test]
fn labels_rest_api_checks_as_sabakan() {
    let s = fleet();
    let long = "x".repeat(64);
    let big = "x".repeat(1025);
    let cases: Vec<(&str, String, &str, u16)> = vec![
        ("PUT", "/api/v1/labels/cs2/datacenter".into(), "heaven", 200),
        ("PUT", "/api/v1/labels/cs2/empty".into(), "", 200),
        ("PUT", format!("/api/v1/labels/cs2/{long}"), "v", 400),
        ("PUT", "/api/v1/labels/cs2/bad%2Fname".into(), "v", 400),
        ("PUT", "/api/v1/labels/cs2/-x".into(), "v", 400),
        ("PUT", "/api/v1/labels/cs2/ok".into(), "bad value", 400),
        ("PUT", "/api/v1/labels/cs2/ok".into(), &big, 500),
        ("PUT", "/api/v1/labels/nope/ok".into(), "v", 404),
        // No bulk form: the name is required.
        ("PUT", "/api/v1/labels/cs2".into(), "{}", 400),
        ("GET", "/api/v1/labels/cs2/datacenter".into(), "", 405),
        // The name is checked before the method.
        ("DELETE", "/api/v1/labels/cs2/bad..".into(), "", 400),
        ("DELETE", "/api/v1/labels/cs2/absent".into(), "", 404),
        ("DELETE", "/api/v1/labels/nope/datacenter".into(), "", 404),
        ("DELETE", "/api/v1/labels/cs1/z".into(), "", 200),
    ];
    for (method, path, body, want) in &cases {
        let (got, text) = rest(&s, method, path, body);
        assert_eq!(got, *want, "{method} {path}: {text}");
        if *want == 400 {
            let v: Value = serde_json::from_str(&text).unwrap();
            assert!(v["error"].as_str().unwrap().starts_with("invalid request"));
        }
    }
    let labels = s.labels("cs2");
    assert_eq!(labels.get("datacenter").map(String::as_str), Some("heaven"));
    assert_eq!(labels.get("empty").map(String::as_str), Some(""));
    assert_eq!(labels.len(), 2);
    assert!(!s.labels("cs1").contains_key("z"));
}

#[test]
fn state_rest_api_follows_transitions() {
    let s = fleet();
    s.insert(
        machine("keyed")
            .state(State::Retiring)
            .encryption_keys(true),
    );
    for (method, path, body, want) in [
        ("GET", "/api/v1/state/cs1", "", 200),
        ("PUT", "/api/v1/state/cs1", "healthy", 200),
        ("PUT", "/api/v1/state/cs1", "healthy", 200),
        ("PUT", "/api/v1/state/cs1", "HEALTHY", 400),
        ("PUT", "/api/v1/state/cs1", "retired", 500),
        ("PUT", "/api/v1/state/keyed", "retired", 400),
        ("PUT", "/api/v1/state/nope", "healthy", 404),
        ("PUT", "/api/v1/state/", "healthy", 400),
        ("POST", "/api/v1/state/cs1", "healthy", 405),
    ] {
        let (got, text) = rest(&s, method, path, body);
        assert_eq!(got, want, "{method} {path} {body}: {text}");
    }
    assert_eq!(rest(&s, "GET", "/api/v1/state/cs1", "").1, "healthy");
    assert_eq!(s.machine("keyed").unwrap().state, State::Retiring);
    // The state change is stamped with the fake's clock.
    assert_eq!(
        s.machine("cs1").unwrap().timestamp,
        Some(NOW.parse().unwrap())
    );
}

#[test]
fn machines_rest_list_in_rest_spelling() {
    let s = fleet();
    let list = |q: &str| {
        let (status, text) = rest(&s, "GET", &format!("/api/v1/machines{q}"), "");
        let serials: Vec<String> = if status == 200 {
            serde_json::from_str::<Vec<Value>>(&text)
                .unwrap()
                .iter()
                .map(|m| m["spec"]["serial"].as_str().unwrap().to_owned())
                .collect()
        } else {
            Vec::new()
        };
        (status, serials)
    };
    assert_eq!(list("").1.len(), 6);
    assert_eq!(
        list("?without-role=boot&state=unhealthy,unreachable").1,
        ["cs1", "cs2"]
    );
    assert_eq!(list("?labels=a=2").1, ["cs1"]);
    assert_eq!(list("?role=nobody"), (404, vec![]));
    assert_eq!(list("?role=cs&without-role=boot").0, 400);
    assert_eq!(list("?labels=a").0, 500);

    let (_, text) = rest(&s, "GET", "/api/v1/machines?serial=cs1", "");
    let v: Value = serde_json::from_str(&text).unwrap();
    let m = &v[0];
    assert_eq!(m["spec"]["labels"], json!({"a": "2", "z": "1"}));
    assert_eq!(m["spec"]["index-in-rack"], 1);
    assert_eq!(m["spec"]["bmc"]["type"], "IPMI-2.0");
    assert_eq!(m["status"]["state"], "unhealthy");
    assert_eq!(m["status"]["timestamp"], "2026-05-31T23:00:00Z");
    assert_eq!(m["status"]["duration"], 3600.0);

    assert_eq!(rest(&s, "DELETE", "/api/v1/machines/cs1", "").0, 500);
    assert_eq!(rest(&s, "DELETE", "/api/v1/machines/cs3", "").0, 200);
    assert!(s.machine("cs3").is_none());
}

#[test]
fn faults_record_and_read_only() {
    let s = fleet();
    s.fault(
        Fault::status(503)
            .on_path("/api/v1/labels/*")
            .method("PUT")
            .times(2),
    );
    s.fault(Fault::garbage("<html>proxy</html>").on_path("/graphql"));
    assert_eq!(rest(&s, "DELETE", "/api/v1/labels/cs1/z", "").0, 200);
    assert_eq!(rest(&s, "PUT", "/api/v1/labels/cs1/k", "v").0, 503);
    assert_eq!(rest(&s, "PUT", "/api/v1/labels/cs1/k", "v").0, 503);
    assert_eq!(rest(&s, "PUT", "/api/v1/labels/cs1/k", "v").0, 200);
    let resp = Client::new()
        .post(format!("{}/graphql", s.url()))
        .json(&json!({"query": CKE_QUERY}))
        .send()
        .unwrap();
    assert_eq!(resp.text().unwrap(), "<html>proxy</html>");
    assert_eq!(s.pending_faults(), 0);

    s.fault(Fault::delay(Duration::from_millis(300)));
    let t = Instant::now();
    assert_eq!(rest(&s, "GET", "/api/v1/state/cs1", "").0, 200);
    assert!(t.elapsed() >= Duration::from_millis(300));

    s.fault(Fault::hangup());
    assert!(
        Client::new()
            .get(format!("{}/api/v1/machines", s.url()))
            .send()
            .is_err()
    );

    s.read_only(true);
    assert_eq!(rest(&s, "PUT", "/api/v1/labels/cs1/k", "v").0, 403);
    assert_eq!(rest(&s, "GET", "/api/v1/machines", "").0, 200);

    let reqs = s.requests();
    assert_eq!(reqs.len(), 9);
    assert_eq!(reqs[1].method, "PUT");
    assert_eq!(reqs[1].path, "/api/v1/labels/cs1/k");
    assert_eq!(reqs[1].body, "v");
    // Writes: the label DELETE, four label PUTs (the 403 one included).
    assert_eq!(s.writes().len(), 5);
    s.clear_requests();
    assert!(s.requests().is_empty());
}

#[test]
fn load_takes_both_shapes_back() {
    let s = fleet();
    let (_, gql) = graphql(
        &s,
        json!({"query": CKE_QUERY, "variables": {"having": null, "notHaving": null}}),
    );
    let rest_list: Value =
        serde_json::from_str(&rest(&s, "GET", "/api/v1/machines", "").1).unwrap();
    for answer in [gql, rest_list] {
        let copy = FakeSabakan::start();
        copy.set_now(NOW);
        copy.load(&answer);
        let mut want = s.machines();
        // CKE's query does not select the BMC address, nor the state's timestamp (it comes
        // back from the duration).
        for m in &mut want {
            m.bmc_ipv4 = String::new();
        }
        assert_eq!(copy.machines(), want);
    }
}
