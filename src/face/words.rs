//! The face's help and errors in the words of the registered families: every text that differs
//! by family is written here once, around what each family says of itself
//! ([`Registered::help`], its `FamilyFace::HELP`), in the order the families are registered.
//! The command line is patched with them as it is built ([`patch`]), so that a help names the
//! families of the registry and no other.

use super::registry::Registered;
use crate::plug::help::Help;

/// The command line with the texts that name families written for `families`.
pub fn patch(mut cmd: clap::Command, families: &[&dyn Registered]) -> clap::Command {
    let order = names(&cmd);
    cmd = set_help(cmd, "kubeconfig", kubeconfig_help(families));
    cmd = set_help(cmd, "lock_file", lock_file_help(families));
    let objects = objects_help(families);
    for verb in ["allow", "suspend", "resume"] {
        cmd = cmd.mut_subcommand(verb, |s| set_help(s, "object", objects.clone()));
    }
    let timeout = timeout_help(families);
    let target = target_help(families);
    for verb in ["allow", "suspend", "resume", "request", "clear"] {
        cmd = cmd.mut_subcommand(verb, |s| set_help(s, "timeout", timeout.clone()));
    }
    for verb in ["request", "clear", "explain"] {
        cmd = cmd.mut_subcommand(verb, |s| set_help(s, "target", target.clone()));
    }
    cmd = cmd.mut_subcommand("status", |s| {
        set_help(s, "objects", status_objects_help(families))
    });
    cmd = cmd.mut_subcommand("run", |s| {
        let s = set_help(s, "loop_", loop_help(families));
        let s = set_help(s, "interval", interval_help(families));
        set_help(s, "leader_elect", leader_elect_help(families))
    });
    cmd = cmd.mut_subcommand("tags", |s| {
        let order = names(&s);
        in_order(
            s.mut_subcommand("parse", |p| about(p, tags_parse_about(families))),
            &order,
        )
    });
    cmd = cmd.mut_subcommand("snapshot", |s| about(s, snapshot_about(families)));
    // `simulate` and `generate` are absent from a build without the `testkit` feature.
    #[cfg(any(test, feature = "testkit"))]
    {
        cmd = cmd.mut_subcommand("simulate", |s| about(s, simulate_about(families)));
        cmd = cmd.mut_subcommand("generate", |s| about(s, generate_about(families)));
    }
    in_order(cmd, &order)
}

/// The names of `cmd`'s subcommands, in its order.
fn names(cmd: &clap::Command) -> Vec<String> {
    cmd.get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect()
}

/// `cmd` with its subcommands back in `order`: `mut_subcommand` moves the one it changes
/// last, and the man page lists the commands in the command line's order.
fn in_order(mut cmd: clap::Command, order: &[String]) -> clap::Command {
    for name in order {
        cmd = cmd.mut_subcommand(name, |s| s);
    }
    cmd
}

/// The help of the argument `id`, in place: `mut_arg` would move it last, and a positional's
/// place is its index.
fn set_help(cmd: clap::Command, id: &str, help: String) -> clap::Command {
    let help = as_clap_writes(help);
    cmd.mut_args(|a| {
        if a.get_id() == id {
            a.help(help.clone())
        } else {
            a
        }
    })
}

/// A command's help without its last full stop, as clap's derive writes a doc comment.
fn about(cmd: clap::Command, text: String) -> clap::Command {
    cmd.about(as_clap_writes(text))
}

fn as_clap_writes(text: String) -> String {
    match text.strip_suffix('.') {
        Some(text) => text.to_owned(),
        None => text,
    }
}

/// Each family's words, with its name.
fn helps<'a>(
    families: &'a [&dyn Registered],
) -> impl Iterator<Item = (&'static str, &'static Help)> + 'a {
    families.iter().map(|f| (f.family(), f.help()))
}

/// The non-empty `pieces`, joined by `separator`.
fn joined<'a>(pieces: impl IntoIterator<Item = &'a str>, separator: &str) -> String {
    pieces
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(separator)
}

/// ` (text)`, or nothing when `text` is empty.
fn in_parentheses(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!(" ({text})")
    }
}

fn kubeconfig_help(families: &[&dyn Registered]) -> String {
    let head = "Kubeconfig of the fleet's Kubernetes cluster [default: $KUBECONFIG, \
                ~/.kube/config; in a Pod without either: its service account].";
    let names = joined(helps(families).filter_map(|(_, h)| h.kubeconfig), "; or ");
    if names.is_empty() {
        format!("{head} No family here reads one.")
    } else {
        format!(
            "{head} It names {names}. Nodes are drained through its Eviction API (TLS \
             verified; the credentials stay in the file)."
        )
    }
}

/// What `--kubeconfig` and `--kube-context` are for, when the fleet's family reads neither.
pub fn kubeconfig_alone(families: &[&dyn Registered]) -> String {
    let names = joined(helps(families).filter_map(|(_, h)| h.kubeconfig), ", or ");
    if names.is_empty() {
        "a Kubernetes cluster, and no family here reads one: leave them out".to_owned()
    } else {
        format!("{names}: add one of them")
    }
}

/// What `--leader-elect` lacks: `--loop` when `loop_missing`, and a live Kubernetes cluster,
/// as the families that have one name it.
pub fn leader_elect_lacks(families: &[&dyn Registered], loop_missing: bool) -> String {
    let live: Vec<&str> = helps(families).filter_map(|(_, h)| h.live).collect();
    if live.is_empty() {
        return "no family here has a Lease to elect with: leave --leader-elect out".to_owned();
    }
    let without: Vec<&str> = helps(families)
        .filter(|(_, h)| h.live.is_none())
        .map(|(name, _)| name)
        .collect();
    let others = if without.is_empty() {
        String::new()
    } else {
        format!(" or a {} fleet", without.join(" or "))
    };
    let and_loop = if loop_missing { "--loop, and " } else { "" };
    format!(
        "add {and_loop}{}; a fleet file{others} has no Lease to elect with",
        live.join(" or ")
    )
}

fn lock_file_help(families: &[&dyn Registered]) -> String {
    let live = joined(helps(families).filter_map(|(_, h)| h.lock), ", ");
    let under_run = if live.is_empty() {
        String::new()
    } else {
        format!("; under /run/lock, {live}")
    };
    format!("Lock file [default: one per fleet]. FLEET.lock next to a fleet file{under_run}.")
}

/// Each family's scopes, then its targets, as KIND/NAME.
fn object_kinds(families: &[&dyn Registered]) -> String {
    let of = |pick: fn(&Help) -> &'static [&'static str]| -> String {
        let each: Vec<String> = helps(families)
            .filter(|(_, h)| !pick(h).is_empty())
            .map(|(name, h)| format!("{} ({name})", pick(h).join(", ")))
            .collect();
        each.join("; ")
    };
    let (scopes, targets) = (of(|h| h.scopes), of(|h| h.targets));
    let mut out = Vec::new();
    if !scopes.is_empty() {
        out.push(format!("Scopes: {scopes}."));
    }
    if !targets.is_empty() {
        out.push(format!("Targets: {targets}."));
    }
    out.join(" ")
}

fn objects_help(families: &[&dyn Registered]) -> String {
    format!(
        "cluster, a scope or a target, as KIND/NAME in the words of the fleet's family (a bare \
         name is a target). {}",
        object_kinds(families)
    )
    .trim_end()
    .to_owned()
}

fn status_objects_help(families: &[&dyn Registered]) -> String {
    format!(
        "Only these targets and scopes [default: the whole fleet]. A target is its full name, \
         KIND/NAME, or a short name that names one target up to a dot (`web1` for \
         `web1.example.org`); `cluster` or a scope selects every target under it. {}",
        object_kinds(families)
    )
    .trim_end()
    .to_owned()
}

fn target_help(families: &[&dyn Registered]) -> String {
    let each = joined(helps(families).map(|(_, h)| h.target), ", ");
    if each.is_empty() {
        "The target.".to_owned()
    } else {
        format!("The target: {each}.")
    }
}

fn timeout_help(families: &[&dyn Registered]) -> String {
    format!(
        "How long to wait until the fleet shows the change; 0 returns once the change is sent. {}",
        joined(helps(families).map(|(_, h)| h.applies), " ")
    )
    .trim_end()
    .to_owned()
}

fn loop_help(families: &[&dyn Registered]) -> String {
    let watched = joined(helps(families).filter_map(|(_, h)| h.watched), ", ");
    format!(
        "Keep making passes, --interval apart (the lock is let go in between). Where the \
         fleet's objects are watched{}, the next pass starts as soon as one changes (within \
         about a second), and at least every --interval (a full resync). On a live Kubernetes \
         cluster (see --leader-elect) SIGTERM stops the loop once the write under way is done; \
         elsewhere it ends the process at once: each write is whole, and the next pass \
         (another replica's) carries on from the marks. A repair command under way is waited \
         for first (within its timeout) and recorded, and no other is started; a second \
         signal stops it.",
        in_parentheses(&watched)
    )
}

fn interval_help(families: &[&dyn Registered]) -> String {
    let watched = joined(helps(families).filter_map(|(_, h)| h.watched), ", ");
    format!(
        "Time between passes with --loop; where the fleet's objects are watched{}, the longest \
         time between two passes. At least 1s.",
        in_parentheses(&watched)
    )
}

fn leader_elect_help(families: &[&dyn Registered]) -> String {
    let live = joined(helps(families).filter_map(|(_, h)| h.live), "; ");
    let clusters = if live.is_empty() {
        "No family here has one.".to_owned()
    } else {
        format!("A live Kubernetes cluster: {live}.")
    };
    format!(
        "With --loop on a live Kubernetes cluster, act only while holding a Lease there, so \
         that of several replicas one acts. {clusters} The Lease (coordination.k8s.io/v1) is \
         checked before every write and every repair command; the others stand by and take \
         over once its Lease runs out (15 s after its last renewal) or is given up (on \
         SIGTERM). The identity is $POD_NAME, else the host name, with a random suffix."
    )
}

fn tags_parse_about(families: &[&dyn Registered]) -> String {
    let each: Vec<String> = families
        .iter()
        .filter(|f| !f.help().marks.is_empty())
        .map(|f| {
            format!(
                "{} with {}",
                f.help().marks,
                f.fleet_flags_written().join(" or ")
            )
        })
        .collect();
    let first = families
        .first()
        .map(|f| f.help().marks)
        .filter(|m| !m.is_empty())
        .map(|m| format!(", else as {m}"))
        .unwrap_or_default();
    format!(
        "Parse tags given as arguments; exit 1 if any autorepair tag is invalid. They are read \
         as the marks of the family whose fleet flag is given{}{first}.",
        in_parentheses(&each.join(", "))
    )
}

/// The families that offer `command`, with the flag of their fleet files.
/// The families `offers` keeps, with their fleet files' flags, in `sentence` ("For a {names}
/// fleet, replayed with {flags}"), then `others` when some family is left out; `none` when
/// no family is kept.
fn offered_by(
    families: &[&dyn Registered],
    offers: impl Fn(&dyn Registered) -> bool,
    sentence: impl Fn(&str, &str) -> String,
    others: &str,
    none: &str,
) -> String {
    let (names, flags): (Vec<&str>, Vec<&str>) = families
        .iter()
        .filter(|f| offers(**f))
        .map(|f| {
            (
                f.family(),
                f.help().fleet_file.unwrap_or("its fleet file's flag"),
            )
        })
        .unzip();
    match names.len() {
        0 => none.to_owned(),
        n => format!(
            "{}{}.",
            sentence(&names.join(" or "), &flags.join(" or ")),
            if n < families.len() { others } else { "" }
        ),
    }
}

fn snapshot_about(families: &[&dyn Registered]) -> String {
    use super::registry::Optional;
    let which = offered_by(
        families,
        |f| f.offers(Optional::Snapshot),
        |names, flags| format!("For a {names} fleet, replayed with {flags}"),
        "; the other families have no snapshot",
        "No family here saves its fleet.",
    );
    format!(
        "Save the fleet (e.g. one read live) as a fleet file, to replay it offline with its \
         family's file flag and --dry-run. {which}"
    )
}

#[cfg(any(test, feature = "testkit"))]
fn generate_about(families: &[&dyn Registered]) -> String {
    let which = offered_by(
        families,
        |f| f.generates(),
        |names, flags| format!("A {names} fleet file, to use with {flags}"),
        ": the other families have no generator",
        "No family here has a generator.",
    );
    format!(
        "Print a synthetic fleet file (deterministic by seed) for benchmarks and what-ifs. {which}"
    )
}

#[cfg(any(test, feature = "testkit"))]
fn simulate_about(families: &[&dyn Registered]) -> String {
    let worlds = joined(helps(families).map(|(_, h)| h.world), " ");
    let mut replicas: Vec<&str> = Vec::new();
    for (_, help) in helps(families) {
        if !help.replicas.is_empty() && !replicas.contains(&help.replicas) {
            replicas.push(help.replicas);
        }
    }
    let worlds = if worlds.is_empty() {
        String::new()
    } else {
        format!("{worlds} ")
    };
    format!(
        "What-if under chaos: many passes over the fleet in memory while faults strike, the \
         watcher is killed and admins edit marks; the safety rules are checked after every \
         pass. The fleet itself is not changed. Exit 1 on a violation, with the seed and a \
         minimal history. {worlds}--replicas N (default 3) runs N watchers, coordinated as the \
         family's replicas are{}: the acting one is also paused past its lease, cut off from \
         the coordination and made to hand over, another takes over, and no write may come \
         from one that does not lead.",
        in_parentheses(&replicas.join("; "))
    )
}

/// The words that name one of the families the command line ships with (their names, fleet
/// flags, tools and kinds) found in `text`, roff's font escapes read as spaces: for the tests
/// that a text written over a registry without them names none.
#[cfg(test)]
pub(crate) fn family_words(text: &str) -> Vec<&'static str> {
    const WORDS: &[&str] = &[
        "ganeti",
        "metal3",
        "machines",
        "machineset",
        "harep",
        "rapi",
        "cke",
        "--cluster",
        "--rapi",
        "--kube",
        "--kube-objects",
        "--sabakan",
        "--sabakan-file",
        "rack/",
        "group/",
    ];
    let plain = ["\\fB", "\\fI", "\\fR", "\\fP"]
        .iter()
        .fold(text.to_lowercase(), |t, font| {
            t.replace(&font.to_lowercase(), " ")
        });
    let word_char = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
    WORDS
        .iter()
        .copied()
        .filter(|w| {
            plain.match_indices(w).any(|(at, _)| {
                let before = plain[..at].chars().next_back();
                let after = plain[at + w.len()..].chars().next();
                (w.starts_with("--") || !before.is_some_and(word_char))
                    && (w.ends_with('/') || !after.is_some_and(word_char))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::family_words;

    #[test]
    fn family_words_are_found_as_words_only() {
        let cases: &[(&str, &[&str])] = &[
            ("--kubeconfig and --kube-context", &[]),
            (
                "with --kube or --kube-objects",
                &["--kube", "--kube-objects"],
            ),
            ("a machines fleet", &["machines"]),
            ("machineset/NS/NAME", &["machineset"]),
            ("a Ganeti cluster, over RAPI", &["ganeti", "rapi"]),
            (r"\fBrack/\fR\fIN\fR", &["rack/"]),
            (r"the \fBmachines\fR family", &["machines"]),
            ("therapist, backgroup/x", &[]),
            ("the toy family, --toy-room", &[]),
        ];
        for (text, want) in cases {
            assert_eq!(family_words(text), *want, "{text:?}");
        }
    }
}
