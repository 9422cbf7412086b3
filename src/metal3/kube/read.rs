//! Reading: one snapshot a pass (discovery, the paginated lists, the workload clusters' Nodes
//! and the Pods on cordoned Nodes), decoded into the family's [`Snapshot`], and what the pass
//! may write remembered with the resourceVersion it read.

use super::*;

impl Inner {
    /// Every object of a kind, page by page (only their metadata if `part` says so); `None`
    /// when the kind is not served.
    pub(super) async fn list(
        &self,
        home: &Home,
        ar: &ApiResource,
        field_selector: Option<&str>,
        part: Part,
    ) -> Result<Option<Vec<Value>>, BackendError> {
        let ep = self
            .endpoint(home)
            .expect("lists address clusters with a client");
        let request = Request::new(DynamicObject::url_path(ar, None));
        let what = resource_name(ar);
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut lp = ListParams::default().limit(self.options.page_size);
            if let Some(f) = field_selector {
                lp = lp.fields(f);
            }
            if let Some(t) = &token {
                lp = lp.continue_token(t);
            }
            let req = match part {
                Part::Whole => request.list(&lp),
                Part::Metadata => request.list_metadata(&lp),
            }
            .map_err(|e| BackendError::Api(format!("cannot list {what}: {e}")))?;
            let path = req.uri().to_string();
            let call = self.call("GET", &ep.server, &path, &what);
            let body = match ep.client.request_text(req).await {
                Ok(body) => body,
                // Not served (a CRD that is not installed, or went since discovery).
                Err(::kube::Error::Api(s)) if s.code == 404 && token.is_none() => {
                    tracing::debug!(server = %ep.server, resource = %what, "not served: skipped");
                    // What discovery found is out of date: the next backend asks again.
                    discovery::forget(&ep.server);
                    return Ok(None);
                }
                Err(e) => return Err(from_kube(e, &call)),
            };
            let mut page: Value = serde_json::from_str(&body)
                .map_err(|e| nonsense(&call, &format!("not JSON: {e}")))?;
            let items = match page.get_mut("items").map(Value::take) {
                Some(Value::Array(items)) => items,
                Some(Value::Null) => Vec::new(),
                _ => {
                    return Err(nonsense(
                        &call,
                        "a list has an \"items\" array, this answer has none",
                    ));
                }
            };
            for mut item in items {
                let Some(obj) = item.as_object_mut() else {
                    return Err(nonsense(&call, "an item of the list is not an object"));
                };
                // Items of built-in lists carry no apiVersion and kind.
                obj.insert("apiVersion".into(), json!(ar.api_version));
                obj.insert("kind".into(), json!(ar.kind));
                // Never read, and often most of an object: the snapshot copies what it keeps.
                if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.remove("managedFields");
                }
                if ar.kind == "Node"
                    && let Some(status) = obj.get_mut("status").and_then(Value::as_object_mut)
                {
                    // The images a Node holds: tens of kilobytes each.
                    status.remove("images");
                }
                out.push(item);
            }
            token = text(&page, "/metadata/continue")
                .filter(|t| !t.is_empty())
                .map(str::to_owned);
            if token.is_none() {
                break;
            }
        }
        tracing::debug!(server = %ep.server, resource = %what, count = out.len(), "listed");
        Ok(Some(out))
    }

    /// A served kind's objects, with its resource; `None` when it is not served.
    pub(super) async fn list_served(
        &self,
        ar: Option<&ApiResource>,
        part: Part,
    ) -> Result<Option<(Arc<ApiResource>, Vec<Value>)>, BackendError> {
        let Some(ar) = ar else { return Ok(None) };
        Ok(self
            .list(&Home::Management, ar, None, part)
            .await?
            .map(|items| (Arc::new(ar.clone()), items)))
    }

    pub(super) async fn list_scopes(
        &self,
        scopes: &[ApiResource],
    ) -> Result<Vec<(Arc<ApiResource>, Vec<Value>)>, BackendError> {
        let mut out = Vec::new();
        for ar in scopes {
            // A Cluster's `spec.paused` holds its Machines back: read whole. The other scopes
            // carry only marks and owners.
            let part = if ar.kind == "Cluster" {
                Part::Whole
            } else {
                Part::Metadata
            };
            out.extend(self.list_served(Some(ar), part).await?);
        }
        Ok(out)
    }

    /// Remembers an object the pass may write.
    pub(super) fn remember(
        &mut self,
        object: ObjectRef,
        api: &Arc<ApiResource>,
        home: Home,
        item: &Value,
    ) {
        let meta = item.get("metadata");
        let field = |k: &str| {
            meta.and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        self.live.insert(
            object,
            Live {
                api: api.clone(),
                home,
                namespace: meta
                    .and_then(|m| m.get("namespace"))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                name: field("name"),
                resource_version: field("resourceVersion"),
                uid: field("uid"),
                annotations: string_map(meta.and_then(|m| m.get("annotations"))),
                labels: string_map(meta.and_then(|m| m.get("labels"))),
            },
        );
    }

    pub(super) async fn read(&mut self) -> Result<Snapshot, BackendError> {
        let mut from_cache = false;
        if self.served.is_none() {
            self.served = discovery::cached(&self.mgmt.server);
            from_cache = self.served.is_some();
        }
        if self.served.is_none() {
            let served = self.discover().await?;
            discovery::remember(&self.mgmt.server, &served);
            self.served = Some(served);
        }
        let snap = self.read_served().await?;
        // A kind the cached answer named was not served (a CRD removed, or another server at
        // the same address): discovery is asked again and the pass reads with its answer, so
        // nothing is missed for a stale cache.
        if from_cache && discovery::cached(&self.mgmt.server).is_none() {
            let served = self.discover().await?;
            discovery::remember(&self.mgmt.server, &served);
            self.served = Some(served);
            return self.read_served().await;
        }
        Ok(snap)
    }

    pub(super) async fn read_served(&mut self) -> Result<Snapshot, BackendError> {
        let served = self.served.clone().expect("discovered");
        self.live.clear();
        let mut items: Vec<Value> = Vec::new();
        let mut problems: Vec<(String, String)> = Vec::new();
        let mgmt = Home::Management;

        // Every list at once: the server's work on one overlaps ours on another. The
        // management cluster's Nodes are listed with them when every Node lives there.
        let node_api = core("Node", "nodes");
        let nodes_here = self.options.workload == Workload::Management;
        let (capi, openshift, metal3_machines, hosts, scopes, management_nodes, remediations) = tokio::try_join!(
            self.list_served(served.machines.as_ref(), Part::Whole),
            self.list_served(served.openshift_machines.as_ref(), Part::Whole),
            // Only their host link annotation is read.
            self.list_served(served.metal3_machines.as_ref(), Part::Metadata),
            self.list_served(served.hosts.as_ref(), Part::Whole),
            self.list_scopes(&served.scopes),
            async {
                if nodes_here {
                    self.list(&mgmt, &node_api, None, Part::Whole).await
                } else {
                    Ok(None)
                }
            },
            self.list_served(served.remediations.as_ref(), Part::Whole),
        )?;

        // Machines: Cluster API first; an OpenShift Machine of the same name is left out.
        let mut machine_items: Vec<(Value, bool)> = Vec::new();
        for (listed, openshift) in [(capi, false), (openshift, true)] {
            let Some((api, listed)) = listed else {
                continue;
            };
            for item in listed {
                let key = namespaced(&item);
                let object = ObjectRef::new(kind::MACHINE, key.clone());
                if self.live.contains_key(&object) {
                    problems.push((
                        format!("Machine {key} ({})", api.api_version),
                        "a Cluster API Machine has the same namespace and name: left out".into(),
                    ));
                    continue;
                }
                self.remember(object, &api, mgmt.clone(), &item);
                machine_items.push((item, openshift));
            }
        }
        if let Some((_, listed)) = metal3_machines {
            items.extend(listed);
        }
        if let Some((api, listed)) = hosts {
            for item in listed {
                let object = ObjectRef::new(kind::HOST, namespaced(&item));
                self.remember(object, &api, mgmt.clone(), &item);
                items.push(item);
            }
        }
        if let Some((api, listed)) = remediations {
            for item in listed {
                let object = ObjectRef::new(kind::REMEDIATION, namespaced(&item));
                self.remember(object, &api, mgmt.clone(), &item);
                items.push(item);
            }
        }
        for (api, listed) in scopes {
            let scope = scope_kind(&api.kind);
            for item in listed {
                let object = ObjectRef::new(scope, namespaced(&item));
                self.remember(object, &api, mgmt.clone(), &item);
                items.push(item);
            }
        }

        // Nodes, where each Machine's Node lives.
        let homes: Vec<Option<Home>> = machine_items
            .iter()
            .map(|(m, openshift)| match (self.options.workload, openshift) {
                (Workload::Management, _) | (_, true) => Some(Home::Management),
                (Workload::ClusterSecrets, false) => cluster_of(m).map(Home::Workload),
            })
            .collect();
        let (nodes, unreadable) = self
            .read_nodes(&machine_items, &homes, management_nodes)
            .await?;
        // A Node named by Machines of two clusters cannot be told apart: neither is used.
        let mut claimed: HashMap<&str, HashSet<&Home>> = HashMap::new();
        for ((m, _), home) in machine_items.iter().zip(&homes) {
            if let (Some(node), Some(home)) = (text(m, "/status/nodeRef/name"), home) {
                claimed.entry(node).or_default().insert(home);
            }
        }
        let ambiguous: HashSet<String> = claimed
            .iter()
            .filter(|(_, homes)| homes.len() > 1)
            .map(|(n, _)| (*n).to_owned())
            .collect();
        let node_api = Arc::new(node_api);
        let mut cordoned: Vec<(Home, String)> = Vec::new();
        let mut fenced: Vec<(Home, String)> = Vec::new();
        for (home, item) in nodes {
            let name = text(&item, "/metadata/name").unwrap_or_default().to_owned();
            if ambiguous.contains(&name) {
                continue;
            }
            if item.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true)
                && claimed.contains_key(name.as_str())
            {
                cordoned.push((home.clone(), name.clone()));
            }
            if super::objects::out_of_service(&item) && claimed.contains_key(name.as_str()) {
                fenced.push((home.clone(), name.clone()));
            }
            self.remember(ObjectRef::new(kind::NODE, name), &node_api, home, &item);
            items.push(item);
        }
        let mut nodes_unknown = std::collections::BTreeSet::new();
        for ((mut m, _), home) in machine_items.into_iter().zip(homes) {
            let node = text(&m, "/status/nodeRef/name").map(str::to_owned);
            // Its Nodes were not looked at: one missing from the snapshot may exist.
            let unknown = match &home {
                None => true,
                Some(Home::Workload(c)) => unreadable.contains_key(c),
                Some(Home::Management) => false,
            } || [node.as_deref(), tainted_node(&m)]
                .into_iter()
                .flatten()
                .any(|n| ambiguous.contains(n));
            if unknown {
                nodes_unknown.insert(namespaced(&m));
            }
            let why = match (&node, &home) {
                (None, _) => None,
                (Some(n), _) if ambiguous.contains(n) => Some(format!(
                    "its Node {n} has namesakes in other workload clusters, so it cannot be told apart"
                )),
                (Some(_), None) => Some(
                    "it names no Cluster (label cluster.x-k8s.io/cluster-name or spec.clusterName), so its workload cluster is unknown".to_owned(),
                ),
                (Some(_), Some(Home::Workload(c))) => unreadable
                    .get(c)
                    .map(|e| format!("its workload cluster {c} cannot be read: {e}")),
                (Some(_), Some(Home::Management)) => None,
            };
            if let Some(why) = why {
                problems.push((
                    format!("Machine {}", namespaced(&m)),
                    format!(
                        "{why}. Its Node is not looked at this pass: no repair starts on its Node's health, and a power cycle under way on it powers its host back on without deleting the Node"
                    ),
                ));
                if let Some(status) = m.get_mut("status").and_then(Value::as_object_mut) {
                    status.remove("nodeRef");
                }
            }
            items.push(m);
        }

        // Pods only where a drain can be under way: a drained Node is cordoned first.
        for (home, node) in &cordoned {
            items.extend(self.pods_on(home, node).await?);
        }
        // Under the out-of-service taint, what is left on a Node keeps its host off (CAPM3
        // waits for it): its Pods and the VolumeAttachments naming it. Either unreadable, the
        // host stays off, and the pass goes on for the rest.
        let mut fence_unknown = std::collections::BTreeSet::new();
        let mut attachments: HashMap<Home, Result<Vec<Value>, BackendError>> = HashMap::new();
        for (home, node) in fenced {
            let pods = if cordoned.contains(&(home.clone(), node.clone())) {
                Ok(Vec::new())
            } else {
                self.pods_on(&home, &node).await
            };
            if !attachments.contains_key(&home) {
                let api = ApiResource {
                    group: "storage.k8s.io".into(),
                    version: "v1".into(),
                    api_version: "storage.k8s.io/v1".into(),
                    kind: "VolumeAttachment".into(),
                    plural: "volumeattachments".into(),
                };
                let listed = self.list(&home, &api, None, Part::Whole).await;
                attachments.insert(home.clone(), listed.map(Option::unwrap_or_default));
            }
            let all = attachments[&home].as_ref().map_err(ToString::to_string);
            match pods.map_err(|e| e.to_string()).and_then(|p| Ok((p, all?))) {
                Ok((pods, all)) => {
                    items.extend(pods);
                    items.extend(
                        all.iter()
                            .filter(|v| text(v, "/spec/nodeName") == Some(node.as_str()))
                            .cloned(),
                    );
                }
                Err(e) => {
                    problems.push((
                        format!("Node {node}"),
                        format!(
                            "it is out of service, and its Pods or VolumeAttachments cannot be read ({e}): a power cycle under way keeps its host off until they can"
                        ),
                    ));
                    fence_unknown.insert(node);
                }
            }
        }

        let mut snap = Snapshot::from_items(&items);
        snap.problems.extend(problems);
        snap.nodes_unknown = nodes_unknown;
        snap.fence_unknown = fence_unknown;
        Ok(snap)
    }

    pub(super) async fn discover(&self) -> Result<Served, BackendError> {
        let d = ::kube::Discovery::new(self.mgmt.client.clone())
            .filter(discovery::GROUPS)
            .run()
            .await
            .map_err(|e| {
                let call = self.call(
                    "GET",
                    &self.mgmt.server,
                    "/apis",
                    "API discovery of the Cluster API and metal3 groups",
                );
                from_kube(e, &call)
            })?;
        let served = Served::from_discovery(&d);
        tracing::info!(
            server = %self.mgmt.server,
            machines = ?served.machines.as_ref().map(|a| &a.api_version),
            openshift_machines = served.openshift_machines.is_some(),
            metal3_machines = ?served.metal3_machines.as_ref().map(|a| &a.api_version),
            hosts = served.hosts.is_some(),
            scopes = ?served.scopes.iter().map(|a| format!("{}/{}", a.api_version, a.kind)).collect::<Vec<_>>(),
            "discovered"
        );
        Ok(served)
    }

    /// The Nodes of every cluster some Machine lives in, with their cluster; and the workload
    /// clusters that could not be read, with why.
    pub(super) async fn read_nodes(
        &mut self,
        machines: &[(Value, bool)],
        homes: &[Option<Home>],
        management_nodes: Option<Vec<Value>>,
    ) -> Result<(Vec<(Home, Value)>, HashMap<String, String>), BackendError> {
        let node_api = core("Node", "nodes");
        let mut out = Vec::new();
        let mut unreadable = HashMap::new();
        let wanted: HashSet<&Home> = homes.iter().flatten().collect();
        // The Node a Machine names, and the one autorepair tainted for it (the same, unless
        // the Machine names another since): both must be seen for the taint's sake.
        let named: HashSet<(&Home, &str)> = machines
            .iter()
            .zip(homes)
            .filter_map(|((m, _), h)| Some((h.as_ref()?, m)))
            .flat_map(|(h, m)| {
                [text(m, "/status/nodeRef/name"), tainted_node(m)]
                    .into_iter()
                    .flatten()
                    .map(move |n| (h, n))
            })
            .collect();
        let all_management = self.options.workload == Workload::Management;
        let management_nodes = match management_nodes {
            Some(nodes) => nodes,
            None if wanted.contains(&Home::Management) => self
                .list(&Home::Management, &node_api, None, Part::Whole)
                .await?
                .unwrap_or_default(),
            None => Vec::new(),
        };
        out.extend(management_nodes.into_iter().map(|n| (Home::Management, n)));
        let mut clusters: Vec<&String> = wanted
            .iter()
            .filter_map(|h| match h {
                Home::Workload(c) => Some(c),
                Home::Management => None,
            })
            .collect();
        clusters.sort();
        for cluster in clusters {
            let home = Home::Workload(cluster.clone());
            let nodes = match self.connect_workload(cluster).await {
                Ok(()) => self.list(&home, &node_api, None, Part::Whole).await,
                Err(e) => Err(e),
            };
            match nodes {
                Ok(nodes) => out.extend(
                    nodes
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|n| {
                            named.contains(&(&home, text(n, "/metadata/name").unwrap_or_default()))
                        })
                        .map(|n| (home.clone(), n)),
                ),
                Err(e) => {
                    tracing::warn!(cluster = %cluster, error = %e, "workload cluster not read");
                    unreadable.insert(cluster.clone(), e.to_string());
                }
            }
        }
        if !all_management {
            // In the management cluster only the Nodes OpenShift Machines name are theirs.
            out.retain(|(home, n)| {
                *home != Home::Management
                    || named.contains(&(home, text(n, "/metadata/name").unwrap_or_default()))
            });
        }
        Ok((out, unreadable))
    }

    /// Makes sure the workload cluster `NAMESPACE/NAME` has a client made from its current
    /// kubeconfig Secret.
    pub(super) async fn connect_workload(&mut self, cluster: &str) -> Result<(), BackendError> {
        let (ns, name) = cluster.split_once('/').unwrap_or(("", cluster));
        let secret_name = format!("{name}-kubeconfig");
        let secret_api = core("Secret", "secrets");
        let req = Request::new(DynamicObject::url_path(&secret_api, Some(ns)))
            .get(&secret_name, &GetParams::default())
            .map_err(|e| {
                BackendError::Api(format!("cannot read Secret {ns}/{secret_name}: {e}"))
            })?;
        let path = req.uri().to_string();
        let what = format!("Secret {ns}/{secret_name}");
        let call = self.call("GET", &self.mgmt.server, &path, &what);
        let body = match self.mgmt.client.request_text(req).await {
            Ok(b) => b,
            Err(::kube::Error::Api(s)) if s.code == 404 => {
                return Err(BackendError::Api(format!(
                    "there is no Secret {ns}/{secret_name} with its kubeconfig"
                )));
            }
            Err(e) => return Err(from_kube(e, &call)),
        };
        // Typed, so that `data` arrives decoded; the text is never logged.
        let secret: k8s_openapi::api::core::v1::Secret =
            serde_json::from_str(&body).map_err(|_| nonsense(&call, "not a Secret"))?;
        let version = format!(
            "{}/{}",
            secret.metadata.uid.unwrap_or_default(),
            secret.metadata.resource_version.unwrap_or_default()
        );
        if self
            .workloads
            .get(cluster)
            .is_some_and(|(v, _)| *v == version)
        {
            return Ok(());
        }
        let value = secret
            .data
            .as_ref()
            .and_then(|d| d.get("value"))
            .map(|b| b.0.as_slice());
        let refused = |e: workload::KubeconfigError| {
            BackendError::Api(format!("Secret {ns}/{secret_name}: {e}"))
        };
        let kc = workload::parse(value).map_err(refused)?;
        let config = workload::config(kc).await.map_err(refused)?;
        let (client, server) = build(config, self.options.timeout, &self.lead)?;
        tracing::info!(cluster = %cluster, server = %server, "workload cluster client made from its kubeconfig Secret");
        self.workloads
            .insert(cluster.to_owned(), (version, Endpoint { client, server }));
        Ok(())
    }

    /// The Pods bound to a Node, by field selector; where the server cannot select Pods by
    /// Node, all Pods, filtered here.
    pub(super) async fn pods_on(
        &mut self,
        home: &Home,
        node: &str,
    ) -> Result<Vec<Value>, BackendError> {
        let pods = core("Pod", "pods");
        let listed = if self.whole_pod_lists.contains(home) {
            self.list(home, &pods, None, Part::Whole).await?
        } else {
            let selector = format!("spec.nodeName={node}");
            match self.list(home, &pods, Some(&selector), Part::Whole).await {
                Err(e) if refuses_field_selector(&e) => {
                    tracing::warn!(
                        ?home,
                        "the API server cannot select Pods by Node: they are listed whole"
                    );
                    self.whole_pod_lists.insert(home.clone());
                    self.list(home, &pods, None, Part::Whole).await?
                }
                other => other?,
            }
        };
        Ok(listed
            .unwrap_or_default()
            .into_iter()
            .filter(|p| text(p, "/spec/nodeName") == Some(node))
            .collect())
    }
}

pub(super) fn namespaced(item: &Value) -> String {
    format!(
        "{}/{}",
        text(item, "/metadata/namespace").unwrap_or_default(),
        text(item, "/metadata/name").unwrap_or_default()
    )
}

pub(super) fn scope_kind(kind: &str) -> &'static str {
    match kind {
        "MachineSet" => kind::MACHINE_SET,
        "MachineDeployment" => kind::MACHINE_DEPLOYMENT,
        "Cluster" => kind::CLUSTER,
        _ => kind::CONTROL_PLANE,
    }
}

/// The Node autorepair recorded tainting for a Machine ([`marks::NODE_TAINTED_KEY`]).
pub(super) fn tainted_node(machine: &Value) -> Option<&str> {
    machine
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(marks::NODE_TAINTED_KEY))
        .and_then(Value::as_str)
}

/// A Cluster API Machine's Cluster, `NAMESPACE/NAME`.
pub(super) fn cluster_of(machine: &Value) -> Option<String> {
    let name = machine
        .pointer("/metadata/labels")
        .and_then(|l| l.get(objects::CLUSTER_NAME_LABEL))
        .and_then(Value::as_str)
        .or_else(|| text(machine, "/spec/clusterName"))
        .filter(|n| !n.is_empty())?;
    Some(format!(
        "{}/{name}",
        text(machine, "/metadata/namespace").unwrap_or_default()
    ))
}
