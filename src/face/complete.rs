//! Object names for the shells' completion, as kubectl completes them: the completion scripts
//! (`contrib/completions/`) call `autorepair __complete-objects -- WORD…` with the words typed
//! so far, the last being the one under the cursor (zsh, fish), or `autorepair
//! __complete-objects --line LINE` with the line up to the cursor (bash, whose own words are
//! split at `:` and `=`, as in a RAPI URL's port), and offer what it prints.
//!
//! The words are parsed by the command line itself and the fleet they name is claimed by the
//! settings stage, exactly as the verb would (its family flags, `--config`, the environment),
//! then read by the family's own backend as `status` reads it, without what only a person or
//! a pass needs (a VM's run status: [`Reads::default`]). Completion must be cheap and
//! must never get in the way: nothing is written, no lock is taken, nothing is ever said on
//! standard error (no log, no error, no panic message), and past [`BUDGET`] (a live source
//! that answers slowly) nothing is printed at all.
//!
//! The hidden verb is not part of clap's command line: `--help`, the man page and the
//! generated scripts do not list it.

use super::cli;
use super::registry::Registered;
use super::settings::{Env, Reads, claim_fleet};
use crate::admin::Nameable;
use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

/// The hidden verb the completion scripts call.
pub const VERB: &str = "__complete-objects";

/// How long completion may take, from start to print: a live fleet that has not answered by
/// then completes nothing, rather than keep the person at the prompt waiting.
pub const BUDGET: Duration = Duration::from_secs(2);

/// Stands for the word under the cursor while the words before it are parsed: no word a person
/// types, so that where clap puts it says what the cursor is on.
const CURSOR: &str = "\u{1}autorepair-completion-cursor";

/// What a verb's argument takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// A target only (`explain`, `request`, `clear`).
    Target,
    /// A target or a scope that holds targets.
    Object,
    /// A repair level of the fleet's family (`request`).
    Level,
    /// A repair level of the fleet's family, or `none` (`allow`).
    LevelOrNone,
}

/// The verbs' arguments that name objects of the fleet: verb, clap's id of the argument, and
/// what it takes.
pub const OBJECT_ARGS: &[(&str, &str, Takes)] = &[
    ("status", "objects", Takes::Object),
    ("explain", "target", Takes::Target),
    ("allow", "object", Takes::Object),
    ("suspend", "object", Takes::Object),
    ("resume", "object", Takes::Object),
    ("request", "target", Takes::Target),
    ("clear", "target", Takes::Target),
];

/// The verbs' arguments that take a repair level: offered as the fleet's family has them
/// (clap's own script offers every family's).
const LEVEL_ARGS: &[(&str, &str, Takes)] = &[
    ("allow", "level", Takes::LevelOrNone),
    ("request", "repair", Takes::Level),
];

/// The words typed after the program, if `argv` (the program first) asks for completion:
/// `VERB -- WORD…`, or `VERB --line LINE` (split as the shell would: [`shell_words`]). A
/// word's leading `~/` is made `home`, as the shell would have given it to the command.
pub fn asked(
    argv: impl IntoIterator<Item = OsString>,
    home: Option<&str>,
) -> Option<Vec<OsString>> {
    let mut argv = argv.into_iter().skip(1).peekable();
    if argv.next()? != VERB {
        return None;
    }
    if argv.next_if(|w| w == "--line").is_some() {
        let line = argv.next().unwrap_or_default();
        let words = line
            .to_str()
            .map(|line| shell_words(line, home))
            .unwrap_or_default();
        return Some(words.into_iter().skip(1).map(OsString::from).collect());
    }
    argv.next_if(|w| w == "--");
    // zsh and fish pass a word as typed: `~/fleet.json` too.
    let expand = |word: OsString| match (word.to_str().and_then(|w| w.strip_prefix("~/")), home) {
        (Some(rest), Some(home)) => Path::new(home).join(rest).into_os_string(),
        _ => word,
    };
    Some(argv.map(expand).collect())
}

/// The words of a command line typed so far, as the shell would pass them to the program:
/// split at blanks outside quotes, with quotes and backslashes taken away, and `~/` at the
/// start of a word made `home`; no other expansion. A line that ends in a blank ends in an
/// empty word, the one the cursor starts; a quote left open runs to the end.
fn shell_words(line: &str, home: Option<&str>) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut started = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
                continue;
            }
            '~' if !started && chars.peek() == Some(&'/') && home.is_some() => {
                word.push_str(home.unwrap_or_default());
            }
            '\\' => word.extend(chars.next()),
            '\'' => word.extend(chars.by_ref().take_while(|&c| c != '\'')),
            '"' => {
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' if matches!(chars.peek(), Some('"' | '\\' | '$' | '`')) => {
                            word.extend(chars.next())
                        }
                        c => word.push(c),
                    }
                }
            }
            c => word.push(c),
        }
        started = true;
    }
    words.push(word);
    words
}

/// Prints the candidates for the last of `words`, one a line, and exits 0, whatever happens:
/// on any failure, or when [`BUDGET`] runs out first, it prints nothing.
pub fn run(families: &[&dyn Registered], words: Vec<OsString>) -> ExitCode {
    // A panic (a bug) must not print its message over the person's command line either.
    std::panic::set_hook(Box::new(|_| {}));
    // Whoever takes it first decides: the watchdog exits with nothing printed, or the
    // candidates are printed whole.
    let gate = std::sync::Arc::new(std::sync::Mutex::new(()));
    let watchdog = gate.clone();
    std::thread::spawn(move || {
        std::thread::sleep(BUDGET);
        let _gate = watchdog.lock();
        std::process::exit(0);
    });
    let found = candidates_for(families, words, &Env::from_process());
    let _gate = gate.lock();
    let mut out = std::io::stdout().lock();
    for name in found {
        if writeln!(out, "{name}").is_err() {
            break;
        }
    }
    let _ = out.flush();
    ExitCode::SUCCESS
}

/// The candidates for the last of `words` (the command line after the program; the last word
/// is the one under the cursor, empty for a new one): none unless it is an object argument of
/// a verb and the fleet named can be read.
pub fn candidates_for(
    families: &[&dyn Registered],
    words: Vec<OsString>,
    env: &Env,
) -> Vec<String> {
    let Some(words) = words
        .into_iter()
        .map(|w| w.into_string().ok())
        .collect::<Option<Vec<String>>>()
    else {
        return Vec::new();
    };
    let Some((typed, before)) = words.split_last() else {
        return Vec::new();
    };
    let Some((parsed, takes)) = position(families, before) else {
        return Vec::new();
    };
    // Names only: nothing the verb would read for a person or a pass (a VM's run status).
    let reads = Reads::default();
    let Ok((_config, claimed)) =
        claim_fleet(&parsed.cli.global, &parsed.matches, families, env, reads)
    else {
        return Vec::new();
    };
    if matches!(takes, Takes::Level | Takes::LevelOrNone) {
        let Some(family) = families.iter().find(|f| f.family() == claimed.family()) else {
            return Vec::new();
        };
        let none = (takes == Takes::LevelOrNone).then_some("none");
        return family
            .levels()
            .into_iter()
            .chain(none)
            .filter(|level| level.starts_with(typed.as_str()))
            .map(str::to_owned)
            .collect();
    }
    claimed
        .nameable()
        .map(|found| matching(&found, takes, typed))
        .unwrap_or_default()
}

/// The command line typed before the cursor, parsed with a word in the cursor's place, and
/// what the argument the cursor is on takes, if it names objects or levels. An object's place
/// takes any word, so [`CURSOR`] stands there; a level's takes only a level, so one of them
/// does (the first family's first, typed nowhere before), and whether clap took it as the
/// level says whether the cursor is on it.
fn position(families: &[&dyn Registered], before: &[String]) -> Option<(cli::Parsed, Takes)> {
    let parse = |cursor: &[&str]| {
        let argv = std::iter::once("autorepair")
            .chain(before.iter().map(String::as_str))
            .chain(cursor.iter().copied());
        cli::parse_from(families, argv).ok()
    };
    if let Some(parsed) = parse(&[CURSOR]) {
        let (verb, matches) = parsed.matches.subcommand()?;
        let &(_, id, takes) = OBJECT_ARGS.iter().find(|(v, _, _)| *v == verb)?;
        return last_value_is(matches, id, CURSOR).then_some((parsed, takes));
    }
    let level = *families.first()?.levels().first()?;
    if before.iter().any(|w| w == level) {
        return None;
    }
    // The object after the level is required: a word stands for it too.
    let parsed = parse(&[level]).or_else(|| parse(&[level, CURSOR]))?;
    let (verb, matches) = parsed.matches.subcommand()?;
    let &(_, id, takes) = LEVEL_ARGS.iter().find(|(v, _, _)| *v == verb)?;
    last_value_is(matches, id, level).then_some((parsed, takes))
}

/// Whether clap took `word` as the last value of the argument `id`.
fn last_value_is(matches: &clap::ArgMatches, id: &str, word: &str) -> bool {
    matches
        .try_get_raw(id)
        .ok()
        .flatten()
        .and_then(|mut values| values.next_back())
        .is_some_and(|value| value == word)
}

/// The objects that begin with `typed`, written as the command line reads them back
/// (`KIND/NAME`); when none does, the targets whose bare name does (`web<TAB>` for
/// `web1.example.org`). Sorted, each once.
pub fn matching(found: &Nameable, takes: Takes, typed: &str) -> Vec<String> {
    let scopes: &[_] = match takes {
        Takes::Target | Takes::Level | Takes::LevelOrNone => &[],
        Takes::Object => &found.scopes,
    };
    let mut names: Vec<String> = found
        .targets
        .iter()
        .chain(scopes)
        .map(|o| o.to_string())
        .filter(|name| name.starts_with(typed))
        .collect();
    if names.is_empty() {
        names = found
            .targets
            .iter()
            .map(|o| o.name.clone())
            .filter(|name| name.starts_with(typed))
            .collect();
    }
    names.sort();
    names.dedup();
    names
}

/// The shells [`script`] writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

/// The shell's completion script: `generated` (clap_complete's, from the command line: verbs,
/// flags, levels) and the hook that completes object names by asking [`VERB`], falling back
/// to `generated` where it offers none.
pub fn script(shell: Shell, generated: &str) -> String {
    match shell {
        Shell::Bash => format!("{generated}{BASH_HOOK}"),
        // clap's script ends by registering its own function (or calling it, when zsh
        // autoloads the file): the hook's wrapper takes that place.
        Shell::Zsh => {
            let body = generated
                .rfind(ZSH_DISPATCH)
                .map_or(generated, |at| &generated[..at]);
            format!("{body}{ZSH_HOOK}")
        }
        // Every file argument but the lock file's leaves out `*.lock` (a fleet file's lock lies
        // beside it, and is never the file asked for), as the bash hook does.
        Shell::Fish => {
            let mut before_verb = Vec::new();
            let files = generated
                .lines()
                .map(|line| match line.strip_suffix(" -r -F") {
                    Some(head) if !line.contains(" -l lock-file ") => {
                        if line.contains("__fish_autorepair_needs_command")
                            && let Some(name) = line.split(" -l ").nth(1)
                        {
                            before_verb.extend(name.split(' ').next().map(|n| format!("--{n}")));
                        }
                        format!("{head} -r -f -a \"(__fish_autorepair_files)\"\n")
                    }
                    _ => format!("{line}\n"),
                })
                .collect::<String>();
            // clap's conditions match no line while an option before the verb waits for its
            // value (their argparse refuses a fleet flag without one), and fish then offers
            // every file: these options' values complete as the lines above would.
            format!(
                "{files}{FISH_HOOK}\nfunction __fish_autorepair_file_before_verb\n    contains -- (commandline -opc)[-1] {}\nend\n\ncomplete -c autorepair -n __fish_autorepair_file_before_verb -f -a \"(__fish_autorepair_files)\"\n",
                before_verb.join(" ")
            )
        }
    }
}

/// Where clap's zsh script registers its function.
const ZSH_DISPATCH: &str = "if [ \"$funcstack[1]\" = \"_autorepair\" ]; then";

const BASH_HOOK: &str = r#"
# Object names, as kubectl completes them (`autorepair suspend <TAB>`: the fleet's objects): asked
# of autorepair itself, which reads the fleet the words typed name (a fleet file; a live fleet
# only if it answers within 2 seconds), writes nothing, takes no lock and prints nothing on
# any failure. Everything else completes as above.
_autorepair_objects() {
    local cur="${COMP_WORDS[COMP_CWORD]}" line alias_text reply
    local -a objects=() program=("${COMP_WORDS[0]}") files=()
    # Typed through an alias (the README's `alias autorepair=…/target/release/autorepair`),
    # the alias's command: a word run from a function is not alias-expanded.
    if alias_text=$(alias -- "${program[0]}" 2>/dev/null); then
        eval "program=(${alias_text#*=})"
    fi
    if [[ ${cur} != -* ]]; then
        while IFS= read -r line; do
            objects+=("${line}")
        done < <("${program[@]}" __complete-objects --line "${COMP_LINE:0:COMP_POINT}" 2>/dev/null </dev/null)
    fi
    if [[ ${#objects[@]} -gt 0 ]]; then
        COMPREPLY=("${objects[@]}")
        return 0
    fi
    # `--FLAG=FILE`: bash makes the `=` a word of its own, and clap's script completes
    # nothing after it (bash's file completion would then offer the lock too): the value
    # completes as it does after `--FLAG FILE`.
    local option="$3"
    if [[ ${option} == = && ${COMP_CWORD} -ge 2 ]]; then
        option=${COMP_WORDS[COMP_CWORD-2]}
    fi
    _autorepair "$1" "$2" "${option}"
    # A fleet file's lock (FILE.lock beside FILE) is offered only where a lock file is asked for.
    if [[ ${option} != --lock-file ]]; then
        for reply in "${COMPREPLY[@]}"; do
            [[ ${reply} == *.lock && " ${COMPREPLY[*]} " == *" ${reply%.lock} "* ]] || files+=("${reply}")
        done
        COMPREPLY=("${files[@]}")
    fi
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _autorepair_objects -o nosort -o bashdefault -o default autorepair
else
    complete -F _autorepair_objects -o bashdefault -o default autorepair
fi
"#;

const ZSH_HOOK: &str = r#"# Object names, as kubectl completes them (`autorepair suspend <TAB>`: the fleet's objects): asked
# of autorepair itself, which reads the fleet the words typed name (a fleet file; a live fleet
# only if it answers within 2 seconds), writes nothing, takes no lock and prints nothing on
# any failure. Everything else completes as above.
_autorepair_objects() {
    local -a objects program=("${(Q)words[1]}")
    # Typed through an alias (the README's `alias autorepair=…/target/release/autorepair`)
    # with complete_aliases set, the alias's command: zsh substitutes it in words otherwise.
    if (( ${+aliases[${program[1]}]} )); then
        program=("${(@Q)${(z)aliases[${program[1]}]}}")
    fi
    if [[ ${PREFIX} != -* ]]; then
        objects=(${(f)"$("${program[@]}" __complete-objects -- "${(@Q)words[2,CURRENT]}" 2>/dev/null </dev/null)"})
    fi
    if (( ${#objects} )); then
        compadd -a objects
        return
    fi
    _autorepair "$@"
}

# A fleet file's lock (FILE.lock beside FILE) is offered only where a lock file is asked for.
zstyle ':completion:*:*:autorepair:*' ignored-patterns '*.lock'
zstyle ':completion:*:*:autorepair:option--lock-file-1:*' ignored-patterns ''

# Autoloaded, this file runs as `_autorepair` once, and the wrapper completes from then on.
compdef _autorepair_objects autorepair
if [ "$funcstack[1]" = "_autorepair" ]; then
    _autorepair_objects "$@"
fi
"#;

const FISH_HOOK: &str = r#"
# Object names, as kubectl completes them (`autorepair suspend <TAB>`: the fleet's objects): asked
# of autorepair itself, which reads the fleet the words typed name (a fleet file; a live fleet
# only if it answers within 2 seconds), writes nothing, takes no lock and prints nothing on
# any failure.
function __fish_autorepair_objects
    set -l words (commandline -opc)
    set -l cur (commandline -ct)
    $words[1] __complete-objects -- $words[2..-1] "$cur" 2>/dev/null </dev/null
end

complete -c autorepair -n "__fish_autorepair_using_subcommand status explain allow suspend resume request clear" -f -a "(__fish_autorepair_objects)"

# Files, but a fleet file's lock (FILE.lock beside FILE), offered only where a lock file is
# asked for.
function __fish_autorepair_files
    # `--FLAG=FILE`: the file is what follows the `=` (fish puts the option back before
    # each candidate).
    __fish_complete_path (string replace -r -- '^--[^=]*=' '' (commandline -ct)) | string match -rv '\.lock(\t.*)?$'
end
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ObjectRef;

    #[test]
    fn a_line_splits_into_the_words_the_shell_would_pass() {
        for (line, want) in [
            (
                "autorepair suspend gr",
                &["autorepair", "suspend", "gr"][..],
            ),
            ("autorepair  suspend ", &["autorepair", "suspend", ""][..]),
            (
                "autorepair --rapi https://c.example:5080 suspend",
                &["autorepair", "--rapi", "https://c.example:5080", "suspend"][..],
            ),
            ("a --cluster=f.json x", &["a", "--cluster=f.json", "x"][..]),
            (
                "a --cluster 'my fleet.json' x",
                &["a", "--cluster", "my fleet.json", "x"][..],
            ),
            (
                "a --cluster \"my \\\"f\\\".json\" x",
                &["a", "--cluster", "my \"f\".json", "x"][..],
            ),
            (
                "a --cluster my\\ fleet.json",
                &["a", "--cluster", "my fleet.json"][..],
            ),
            (
                "a --cluster ~/f.json x~/y",
                &["a", "--cluster", "/home/me/f.json", "x~/y"][..],
            ),
            ("a suspend 'gr", &["a", "suspend", "gr"][..]),
            ("a suspend ''", &["a", "suspend", ""][..]),
            ("", &[""][..]),
        ] {
            assert_eq!(shell_words(line, Some("/home/me")), want, "{line:?}");
        }
    }

    /// The cursor's argument decides: an object argument of a verb completes, a level, a flag's
    /// value, a verb or a word past the last argument do not.
    #[test]
    fn only_an_object_or_level_argument_completes() {
        let families = crate::FAMILIES;
        let at = |line: &str| {
            let words: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
            position(families, &words).map(|(_, takes)| takes)
        };
        for (before, want) in [
            ("suspend", Some(Takes::Object)),
            ("--cluster f suspend", Some(Takes::Object)),
            ("suspend --cluster f --for 2h", Some(Takes::Object)),
            ("resume --all", Some(Takes::Object)),
            ("allow failover", Some(Takes::Object)),
            ("allow", Some(Takes::LevelOrNone)),
            ("--cluster f allow", Some(Takes::LevelOrNone)),
            ("request reinstall", Some(Takes::Target)),
            ("request", Some(Takes::Level)),
            ("request --timeout 5s", Some(Takes::Level)),
            ("allow failover instance/i", None),
            ("explain", Some(Takes::Target)),
            ("explain -o", None),
            ("clear --timeout 0", Some(Takes::Target)),
            ("status", Some(Takes::Object)),
            ("status group/g instance/i", Some(Takes::Object)),
            ("status --now", None),
            ("suspend --for", None),
            ("suspend group/g", None),
            ("", None),
            ("run", None),
            ("tags parse", None),
            ("suspend --help", None),
        ] {
            assert_eq!(at(before), want, "{before:?}");
        }
    }

    #[test]
    fn every_object_argument_is_one_of_the_command_line() {
        let cmd = cli::command(crate::FAMILIES);
        for (verb, id, _) in OBJECT_ARGS.iter().chain(LEVEL_ARGS) {
            let sub = cmd
                .find_subcommand(verb)
                .unwrap_or_else(|| panic!("no verb {verb}"));
            assert!(
                sub.get_arguments()
                    .any(|a| a.get_id() == *id && a.is_positional()),
                "{verb} has no positional {id}"
            );
        }
    }

    #[test]
    fn candidates_begin_with_what_is_typed() {
        let found = Nameable {
            targets: vec![
                ObjectRef::new("instance", "web1.ams.example"),
                ObjectRef::new("instance", "web2.ams.example"),
                ObjectRef::new("instance", "db1.ams.example"),
            ],
            scopes: vec![
                ObjectRef::singleton("cluster"),
                ObjectRef::new("group", "ams"),
                ObjectRef::new("group", "fra"),
            ],
        };
        let all_targets =
            "instance/db1.ams.example instance/web1.ams.example instance/web2.ams.example";
        for (takes, typed, want) in [
            (Takes::Object, "gr", "group/ams group/fra"),
            (Takes::Object, "group/f", "group/fra"),
            (Takes::Object, "c", "cluster"),
            (Takes::Target, "inst", all_targets),
            (Takes::Target, "", all_targets),
            (Takes::Target, "gr", ""),
            (Takes::Target, "c", ""),
            (
                Takes::Object,
                "instance/w",
                "instance/web1.ams.example instance/web2.ams.example",
            ),
            (Takes::Object, "web", "web1.ams.example web2.ams.example"),
            (Takes::Target, "db", "db1.ams.example"),
            (Takes::Object, "x", ""),
        ] {
            assert_eq!(
                matching(&found, takes, typed).join(" "),
                want,
                "{takes:?} {typed:?}"
            );
        }
    }

    #[test]
    fn asked_only_by_the_hidden_verb() {
        let argv = |w: &[&str]| w.iter().map(OsString::from).collect::<Vec<_>>();
        let home = Some("/home/me");
        for (given, want) in [
            (
                &["autorepair", VERB, "--", "suspend", "g"][..],
                Some(&["suspend", "g"][..]),
            ),
            (&["autorepair", VERB, "suspend", ""], Some(&["suspend", ""])),
            (
                &["autorepair", VERB, "--", "--cluster", "~/f.json", "x"],
                Some(&["--cluster", "/home/me/f.json", "x"]),
            ),
            (&["autorepair", VERB], Some(&[])),
            (
                &[
                    "autorepair",
                    VERB,
                    "--line",
                    "autorepair --cluster ~/f.json suspend ",
                ],
                Some(&["--cluster", "/home/me/f.json", "suspend", ""]),
            ),
            (&["autorepair", VERB, "--line"], Some(&[])),
            (&["autorepair", "status", VERB], None),
            (&["autorepair"], None),
        ] {
            assert_eq!(asked(argv(given), home), want.map(argv), "{given:?}");
        }
    }

    /// The zsh wrapper replaces clap's registration rather than adding a second one.
    #[test]
    fn each_script_ends_with_its_hook() {
        let zsh = script(
            Shell::Zsh,
            "_autorepair() {\n}\n\nif [ \"$funcstack[1]\" = \"_autorepair\" ]; then\n    _autorepair \"$@\"\nelse\n    compdef _autorepair autorepair\nfi\n",
        );
        assert!(!zsh.contains("compdef _autorepair autorepair"), "{zsh}");
        assert!(
            zsh.contains("compdef _autorepair_objects autorepair"),
            "{zsh}"
        );
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            assert!(script(shell, "").contains(VERB), "{shell:?}");
        }
    }
}
