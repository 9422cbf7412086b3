//! Several watchers on one real cluster, as a site runs them: `run --loop --only-on-master` on
//! every master candidate, two of them on the master itself. Whichever acts is killed, stopped
//! with SIGTERM, paused, or cut off from the cluster in mid-pass; the oracle reads Ganeti's own
//! job queue and tags: no repair started twice, each recorded once, and the replica that is not
//! on the master writes nothing at all.
//!
//! What keeps one actor: the master role (ssconf) between hosts; on the master, the lock named by
//! the cluster's uuid, which the kernel lets go the moment its holder dies, and which a paused
//! or cut-off holder keeps until it gives up (its request's timeout).

use super::*;
use std::io::{BufRead, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex as StdMutex};

/// What happens to the replica that acts.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Disruption {
    Signal(&'static str),
    /// SIGSTOP for longer than a pass, then SIGCONT.
    Pause,
    /// Its connections to the cluster pass nothing from now on, either way, and stay open: its
    /// requests hang until its `rapi.timeout`.
    Cut,
}

/// A watcher process with its standard output's lines (each with when it came) and its log.
struct Replica {
    child: std::process::Child,
    lines: Arc<StdMutex<Vec<(Instant, String)>>>,
    log: PathBuf,
}

impl Replica {
    fn start(tb: &Testbed, name: &str, mut cmd: std::process::Command) -> Replica {
        let log = tb.dir.path().join(format!("{name}.log"));
        let mut child = cmd
            .env("RUST_LOG", "info")
            .stdout(std::process::Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .process_group(0)
            .spawn()
            .unwrap();
        let lines = Arc::new(StdMutex::new(Vec::new()));
        let out = child.stdout.take().unwrap();
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                sink.lock().unwrap().push((Instant::now(), line));
            }
        });
        Replica { child, lines, log }
    }

    fn signal(&self, sig: &str) {
        let status = std::process::Command::new("kill")
            .args([&format!("-{sig}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -{sig}");
    }

    /// Its pass lines (`pass N: …`) that came after `since`.
    fn passes_since(&self, since: Instant) -> Vec<String> {
        self.lines
            .lock()
            .unwrap()
            .iter()
            .filter(|(at, line)| *at > since && line.starts_with("pass "))
            .map(|(_, line)| line.clone())
            .collect()
    }

    /// When its first pass that acted (planned an action) came after `since`.
    fn first_act_since(&self, since: Instant) -> Option<Instant> {
        self.lines
            .lock()
            .unwrap()
            .iter()
            .find(|(at, line)| {
                *at > since && line.starts_with("pass ") && !line.contains(": 0 action(s)")
            })
            .map(|(at, _)| *at)
    }

    fn stdout(&self) -> String {
        let lines = self.lines.lock().unwrap();
        lines.iter().map(|(_, l)| format!("{l}\n")).collect()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Replica {
    /// SIGKILL to the whole group, a stopped one too: a replica left looping (or paused with
    /// the lock) would act on, or block, the next test's cluster.
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.wait();
    }
}

/// The process holding the flock on `lock`, from the kernel's table.
fn holder(lock: &Path) -> Option<u32> {
    let ino = std::fs::metadata(lock).ok()?.ino();
    // "1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234 0 EOF"; a waiter's line has "->" second.
    std::fs::read_to_string("/proc/locks")
        .ok()?
        .lines()
        .find_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let inode = f.get(5)?.rsplit(':').next()?.parse::<u64>().ok()?;
            (f.get(1) == Some(&"FLOCK") && inode == ino).then(|| f.get(4)?.parse().ok())?
        })
}

/// A TCP relay to node1's RAPI daemon that can be cut as a partition cuts: from then on it
/// passes nothing either way, closes nothing, and holds new connections open.
struct Relay {
    port: u16,
    cut: Arc<AtomicBool>,
}

impl Relay {
    fn start(target: &'static str) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = Arc::new(AtomicBool::new(false));
        let flag = cut.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().map_while(Result::ok) {
                let cut = flag.clone();
                std::thread::spawn(move || {
                    let server = if cut.load(Ordering::SeqCst) {
                        None
                    } else {
                        TcpStream::connect(target).ok()
                    };
                    let Some(server) = server else {
                        // Cut (or nothing to reach): swallow what comes until the client gives up.
                        pipe(client, None, &cut);
                        return;
                    };
                    let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                    let back = cut.clone();
                    std::thread::spawn(move || pipe(s2, Some(c2), &back));
                    pipe(client, Some(server), &cut);
                });
            }
        });
        Relay { port, cut }
    }

    fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }

    fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
    }
}

/// Copies `from` to `to` until `from` ends; once cut, what comes is dropped and the end is not
/// passed on either.
fn pipe(mut from: TcpStream, mut to: Option<TcpStream>, cut: &AtomicBool) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => {
                if !cut.load(Ordering::SeqCst)
                    && let Some(to) = &to
                {
                    let _ = to.shutdown(std::net::Shutdown::Write);
                }
                return;
            }
            Ok(n) => n,
        };
        if cut.load(Ordering::SeqCst) {
            continue;
        }
        if let Some(t) = &mut to
            && t.write_all(&buf[..n]).is_err()
        {
            return;
        }
    }
}

/// The most instances with a pending tag at once (one read of them all each time), sampled
/// every 50 ms until `stop`. One repair may carry two pending tags for a moment (the tag
/// naming its jobs written before the one without them is removed): that is one repair.
fn most_pending_at_once(tb: &Testbed, stop: &AtomicBool) -> (usize, Vec<String>) {
    let mut most = (0, Vec::new());
    while !stop.load(Ordering::Relaxed) {
        let pending: Vec<String> = tb
            .get("/2/instances?bulk=1")
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| {
                i["tags"].as_array().into_iter().flatten().any(|t| {
                    t.as_str()
                        .is_some_and(|t| matches!(tags::parse(t), Ok(Tag::Pending(_))))
                })
            })
            .filter_map(|i| Some(i["name"].as_str()?.to_owned()))
            .collect();
        if pending.len() > most.0 {
            most = (pending.len(), pending);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    most
}

/// The tag jobs (`OP_TAGS_SET`, `OP_TAGS_DEL`) in the queue that ended in error, with their
/// result: a replica that wrote again what its predecessor had queued left one ("Tag(s) …
/// not found").
fn failed_tag_jobs(tb: &Testbed) -> Vec<(u64, Value)> {
    let listed = tb.get("/2/jobs?bulk=1");
    listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["status"] == "error")
        .filter(|j| {
            j["ops"].as_array().into_iter().flatten().any(|op| {
                op["OP_ID"]
                    .as_str()
                    .is_some_and(|id| id.starts_with("OP_TAGS_"))
            })
        })
        .map(|j| {
            let id = j["id"].as_u64().unwrap();
            (id, tb.get(&format!("/2/jobs/{id}"))["opresult"].clone())
        })
        .collect()
}

struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

pub(super) fn one_replica_acts_whichever_is_killed_paused_or_cut_off() {
    use Disruption::*;
    let tb = testbed();
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let instances = ["inst50", "inst51", "inst52"];
    // One repair at a time, so that the repairs span many passes of either replica; a request
    // that hangs gives up after 5 s.
    let config = tb.config_text(
        "replicas.toml",
        "[limits]\nmax_pending = 1\n[ganeti]\niallocator = \"hail\"\n[rapi]\ntimeout = \"5s\"\n",
    );
    let loop_args = ["--loop", "--interval", "1s"];
    for disruption in [Signal("KILL"), Signal("TERM"), Pause, Cut] {
        fresh(&tb, &instances.map(|i| (i, 2, "diskless")));
        tb.add_tags("/2/tags", &[t("failover")]);
        tb.role(&tb.node2, "offline");
        let lock = autorepair::lock::for_cluster(tb.get("/2/info")["uuid"].as_str().unwrap());
        // `first` reaches the cluster through a relay that can be cut; `second` directly; the
        // third runs on node2, which is no master.
        let relay = Relay::start("127.0.0.1:5080");
        let first = Replica::start(
            &tb,
            "first",
            replica_via(&tb, 1, &relay.url(), &config, &loop_args),
        );
        let second = Replica::start(&tb, "second", replica(&tb, 1, &config, &loop_args));
        let other_node = Replica::start(&tb, "node2", replica(&tb, 2, &config, &loop_args));
        // Under max_pending = 1, never two pending tags at once, whoever wrote them.
        let sampling = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let sampler = scope.spawn(|| most_pending_at_once(&tb, &sampling));
            // A failed assertion ends the sampling too, or the scope would wait for it for ever.
            let _stop = StopOnDrop(&sampling);

            // The moment: `first` holds the lock, in mid-pass, while a repair is under way.
            let start = Instant::now();
            loop {
                assert!(
                    start.elapsed() < Duration::from_secs(120),
                    "{disruption:?}: `first` never acted while a repair was pending:\n{}\n{}",
                    first.stdout(),
                    first.log()
                );
                if holder(&lock) == Some(first.child.id())
                    && instances.iter().any(|i| tb.pending(i) > 0)
                    && holder(&lock) == Some(first.child.id())
                {
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            let at = Instant::now();
            match disruption {
                Signal(sig) => first.signal(sig),
                Pause => {
                    first.signal("STOP");
                    // A request already on its way may still land; then nothing can.
                    std::thread::sleep(Duration::from_millis(500));
                    let before = tb.job_ids();
                    let window = Instant::now();
                    std::thread::sleep(Duration::from_secs(6));
                    assert_eq!(
                        tb.job_ids(),
                        before,
                        "a job was submitted while the lock's holder was paused"
                    );
                    assert_eq!(
                        holder(&lock),
                        Some(first.child.id()),
                        "the paused one keeps the lock"
                    );
                    assert!(
                        second.passes_since(window).is_empty(),
                        "`second` made a pass while the lock was held: {:?}",
                        second.passes_since(window)
                    );
                    first.signal("CONT");
                }
                Cut => relay.cut(),
            }

            // Until every repair is recorded.
            let start = Instant::now();
            while !instances
                .iter()
                .all(|i| tb.pending(i) == 0 && !tb.results(i).is_empty())
            {
                assert!(
                    start.elapsed() < Duration::from_secs(180),
                    "{disruption:?}: the repairs did not end: failover jobs {:?}, tags {:?}\nfirst:\n{}{}\nsecond:\n{}{}",
                    instances.map(|i| tb.jobs_of(i, "OP_INSTANCE_FAILOVER")),
                    instances.map(|i| tb.tags(i)),
                    first.stdout(),
                    first.log(),
                    second.stdout(),
                    second.log()
                );
                std::thread::sleep(Duration::from_millis(250));
            }
            tb.settle();
            sampling.store(true, Ordering::Relaxed);
            let (most, seen) = sampler.join().unwrap();
            assert!(
                most <= 1,
                "{disruption:?}: {most} instances with a pending tag at once under max_pending = 1: {seen:?}\nfirst:\n{}{}\nsecond:\n{}{}",
                first.stdout(),
                first.log(),
                second.stdout(),
                second.log()
            );
            let failed = failed_tag_jobs(&tb);
            assert!(
                failed.is_empty(),
                "{disruption:?}: tag jobs ended in error: {failed:?}\nfirst:\n{}{}\nsecond:\n{}{}",
                first.stdout(),
                first.log(),
                second.stdout(),
                second.log()
            );

            // Each instance failed over once, by one job, recorded once as that job's success.
            for inst in instances {
                let jobs = tb.jobs_of(inst, "OP_INSTANCE_FAILOVER");
                let results = tb.results(inst);
                assert_eq!(jobs.len(), 1, "{disruption:?}: {inst}: {jobs:?}");
                assert_eq!(results.len(), 1, "{disruption:?}: {inst}: {results:?}");
                assert_eq!(
                    results[0].1,
                    RepairResult::Success,
                    "{disruption:?}: {inst}"
                );
                assert_eq!(results[0].2, [jobs[0].0], "{disruption:?}: {inst}");
                assert_eq!(tb.pnode(inst), tb.node1, "{disruption:?}: {inst}");
            }
            // node2's replica never made a pass: it stood by, reading nothing, writing nothing.
            assert!(
                other_node.stdout().is_empty(),
                "{disruption:?}: {}",
                other_node.stdout()
            );
            assert!(
                other_node.log().contains("stands by"),
                "{}",
                other_node.log()
            );
            match disruption {
                Signal(sig) => {
                    let took_over = second.first_act_since(at).unwrap_or_else(|| {
                        panic!(
                            "{disruption:?}: `second` never acted:\n{}{}",
                            second.stdout(),
                            second.log()
                        )
                    });
                    eprintln!(
                        "ganeti SIG{sig}: the other replica on the master acted {:.2} s after the signal",
                        (took_over - at).as_secs_f64()
                    );
                    let mut first = first;
                    let status = first.child.wait().unwrap();
                    let number = if sig == "KILL" { 9 } else { 15 };
                    assert_eq!(status.signal(), Some(number), "{status:?}");
                }
                Pause => {}
                Cut => {
                    assert!(
                        second.first_act_since(at).is_some(),
                        "`second` took over from the cut-off one:\n{}{}",
                        second.stdout(),
                        second.log()
                    );
                    // Its requests gave up at rapi.timeout (taking `second`'s turn above means it
                    // let the lock go), and it lives on, trying again each interval.
                    let log = first.log();
                    assert!(log.contains("did not answer within 5s"), "{log}");
                    let mut first = first;
                    assert!(first.child.try_wait().unwrap().is_none(), "{log}");
                }
            }
        });
    }
}
