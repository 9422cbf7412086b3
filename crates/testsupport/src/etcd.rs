//! A real etcd cluster on loopback, as CKE runs it: three members of Debian's `etcd-server`,
//! each on an address of its own (`127.0.79.N`, client port 2379 and peer port 2380 as CKE
//! uses them), TLS everywhere with client certificates, from a CA made for the run with
//! `openssl`. A member can be frozen (SIGSTOP: it answers nothing, as one cut off by a
//! partition); the build script (`cfg(have_etcd)`) says whether the tools are there.
//!
//! `etcdctl` (Debian's `etcd-client`) says when the cluster is up.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The client port CKE's endpoints use (`https://ADDRESS:2379`).
pub const CLIENT_PORT: u16 = 2379;

pub struct Etcd {
    dir: PathBuf,
    members: Vec<Member>,
}

struct Member {
    address: String,
    child: Option<Child>,
    frozen: std::cell::Cell<bool>,
}

fn run(dir: &Path, args: &[&str]) {
    let out = Command::new(args[0])
        .args(&args[1..])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA, a certificate every member serves and peers with, and a client certificate.
fn certificates(dir: &Path, addresses: &[String]) {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec![
        "openssl",
        "req",
        "-x509",
        "-days",
        "2",
        "-subj",
        "/CN=etcd-test-ca",
    ];
    ca.extend(ec);
    ca.extend(["-keyout", "ca.key", "-out", "ca.pem"]);
    run(dir, &ca);
    // Peers connect from 127.0.0.1 (the kernel's source address on lo), and etcd checks a
    // peer's certificate against the address it connects from.
    let sans: Vec<String> = addresses
        .iter()
        .map(String::as_str)
        .chain(["127.0.0.1"])
        .map(|a| format!("IP:{a}"))
        .collect();
    for (name, usage, san) in [
        ("server", "serverAuth,clientAuth", sans.join(",")),
        ("client", "clientAuth", "DNS:autorepair".to_owned()),
    ] {
        std::fs::write(
            dir.join(format!("{name}.ext")),
            format!("subjectAltName={san}\nextendedKeyUsage={usage}\n"),
        )
        .unwrap();
        let key = format!("{name}.key");
        let csr = format!("{name}.csr");
        let subj = format!("/CN={name}");
        let mut req = vec![
            "openssl", "req", "-subj", &subj, "-keyout", &key, "-out", &csr,
        ];
        req.extend(ec);
        run(dir, &req);
        let pem = format!("{name}.pem");
        let ext = format!("{name}.ext");
        run(
            dir,
            &[
                "openssl",
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-out",
                &pem,
                "-extfile",
                &ext,
            ],
        );
    }
}

impl Etcd {
    /// Three members on 127.0.79.1-3, up and answering.
    pub fn start() -> Etcd {
        let dir = std::env::temp_dir().join(format!(
            "autorepair-etcd-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let addresses: Vec<String> = (1..=3).map(|n| format!("127.0.79.{n}")).collect();
        certificates(&dir, &addresses);
        let cluster: Vec<String> = addresses
            .iter()
            .map(|a| format!("{a}=https://{a}:2380"))
            .collect();
        let mut etcd = Etcd {
            dir,
            members: Vec::new(),
        };
        for a in &addresses {
            let child = etcd.member(a, &cluster.join(","));
            etcd.members.push(Member {
                address: a.clone(),
                child: Some(child),
                frozen: std::cell::Cell::new(false),
            });
        }
        etcd.wait_healthy(Duration::from_secs(60));
        etcd
    }

    fn member(&self, address: &str, cluster: &str) -> Child {
        let d = &self.dir;
        let file = |name: &str| d.join(name).display().to_string();
        let log = std::fs::File::create(d.join(format!("{address}.log"))).unwrap();
        Command::new("etcd")
            .args(["--name", address, "--data-dir"])
            .arg(d.join(format!("{address}.data")))
            .arg(format!(
                "--listen-client-urls=https://{address}:{CLIENT_PORT}"
            ))
            .arg(format!(
                "--advertise-client-urls=https://{address}:{CLIENT_PORT}"
            ))
            .arg(format!("--listen-peer-urls=https://{address}:2380"))
            .arg(format!(
                "--initial-advertise-peer-urls=https://{address}:2380"
            ))
            .arg(format!("--initial-cluster={cluster}"))
            .args(["--initial-cluster-state", "new", "--initial-cluster-token"])
            .arg(d.file_name().unwrap())
            .args([
                "--cert-file",
                &file("server.pem"),
                "--key-file",
                &file("server.key"),
            ])
            .args(["--trusted-ca-file", &file("ca.pem"), "--client-cert-auth"])
            .args(["--peer-cert-file", &file("server.pem")])
            .args(["--peer-key-file", &file("server.key")])
            .args([
                "--peer-trusted-ca-file",
                &file("ca.pem"),
                "--peer-client-cert-auth",
            ])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap()
    }

    /// The CA a client trusts, and the client's certificate and key.
    pub fn ca(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }
    pub fn client_cert(&self) -> PathBuf {
        self.dir.join("client.pem")
    }
    pub fn client_key(&self) -> PathBuf {
        self.dir.join("client.key")
    }

    /// The members' addresses (their names too, as CKE names members).
    pub fn addresses(&self) -> Vec<String> {
        self.members.iter().map(|m| m.address.clone()).collect()
    }

    fn etcdctl(&self, endpoints: &[String], args: &[&str]) -> std::process::Output {
        let endpoints: Vec<String> = endpoints
            .iter()
            .map(|a| format!("https://{a}:{CLIENT_PORT}"))
            .collect();
        Command::new("etcdctl")
            .env("ETCDCTL_API", "3")
            .arg(format!("--endpoints={}", endpoints.join(",")))
            .arg("--cacert")
            .arg(self.ca())
            .arg("--cert")
            .arg(self.client_cert())
            .arg("--key")
            .arg(self.client_key())
            .args(["--dial-timeout", "2s", "--command-timeout", "3s"])
            .args(args)
            .output()
            .unwrap()
    }

    /// The members running and not frozen.
    fn answering(&self) -> Vec<String> {
        self.members
            .iter()
            .filter(|m| m.child.is_some() && !m.frozen.get())
            .map(|m| m.address.clone())
            .collect()
    }

    /// Writes a key through the members that answer: the revision moves on, so a member that
    /// missed it is behind. Tried again for a while: a frozen leader takes an election first.
    pub fn put(&self, key: &str, value: &str) {
        let start = Instant::now();
        loop {
            let out = self.etcdctl(&self.answering(), &["put", key, value]);
            if out.status.success() {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "etcdctl put: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Waits until every running member answers a linearizable read.
    pub fn wait_healthy(&self, within: Duration) {
        let start = Instant::now();
        loop {
            let ok = self.answering().iter().all(|a| {
                self.etcdctl(std::slice::from_ref(a), &["get", "health"])
                    .status
                    .success()
            });
            if ok {
                return;
            }
            if start.elapsed() >= within {
                let logs: Vec<String> = self
                    .members
                    .iter()
                    .map(|m| {
                        let log =
                            std::fs::read_to_string(self.dir.join(format!("{}.log", m.address)))
                                .unwrap_or_default();
                        let tail: Vec<&str> = log.lines().rev().take(8).collect();
                        format!(
                            "{}:\n{}",
                            m.address,
                            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                        )
                    })
                    .collect();
                panic!("etcd not healthy within {within:?}:\n{}", logs.join("\n"));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn signal(&self, i: usize, signal: &str) {
        let pid = self.members[i].child.as_ref().expect("running").id();
        let ok = Command::new("kill")
            .args([signal, &pid.to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill {signal} {pid}");
    }

    /// Member `i` answers nothing from now on (its process stopped, its sockets open: as a
    /// member cut off from everyone).
    pub fn freeze(&self, i: usize) {
        self.signal(i, "-STOP");
        self.members[i].frozen.set(true);
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        for m in &mut self.members {
            if let Some(mut c) = m.child.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
