//! The layout docs/architecture.md promises: the engine (a crate of its own, so the compiler
//! already keeps it from importing a family or the face) names no family and does no I/O of its
//! own; the modules of `src/` import each other only as its layout section allows, read from
//! the sources' syntax; and the repository explains itself: no file cites a text outside it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("the directory exists") {
        let path = entry.expect("readable directory").path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// A source file's lines before its test module (`#[cfg(test)] mod …`), which may use anything
/// as a fixture.
fn outside_tests(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .windows(2)
        .position(|w| w[0].trim() == "#[cfg(test)]" && w[1].contains("mod "))
        .unwrap_or(lines.len());
    lines[..end].to_vec()
}

#[test]
fn engine_names_no_family_and_does_no_io() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Its manifest may name no crate of this workspace: every one of them is a family's or a
    // test fixture's.
    let manifest = std::fs::read_to_string(root.join("crates/engine/Cargo.toml"))
        .expect("crates/engine/Cargo.toml");
    assert!(
        !manifest.contains("path ="),
        "the engine crate must depend on no crate of the workspace:\n{manifest}"
    );
    let engine = root.join("crates/engine");
    let mut files = rust_files(&engine.join("src"));
    assert!(files.len() >= 5, "found only {files:?}");
    files.push(engine.join("Cargo.toml"));
    // The families' names (those registered, and the toy family examples/toy_family.rs
    // registers), words of the families, modules outside the engine, and the I/O the edges own.
    let families: Vec<String> = family_names().into_iter().collect();
    let forbidden = families.iter().map(String::as_str).chain([
        "instance",
        "drbd",
        "disk_template",
        "rapi",
        "sabakan",
        "crate::config",
        "crate::cli",
        "crate::face",
        "crate::admin",
        "crate::report",
        "crate::metrics",
        "std::fs",
        "std::net",
        "std::process",
        "reqwest",
    ]);
    let forbidden: Vec<&str> = forbidden.collect();
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable source");
        for (n, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            for word in &forbidden {
                if lower.contains(word) {
                    found.push(format!("{}:{}: {word}: {line}", file.display(), n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "the engine must stay family-free:\n{}",
        found.join("\n")
    );
}

/// The files the repository is made of: git's tracked files where git can tell, else every
/// file outside build output and hidden directories (a source tarball has no `.git`).
fn repository_files(root: &Path) -> Vec<PathBuf> {
    let tracked = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output()
        .ok()
        .filter(|o| o.status.success() && !o.stdout.is_empty());
    if let Some(out) = tracked {
        return out
            .stdout
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| root.join(String::from_utf8_lossy(p).as_ref()))
            .collect();
    }
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("readable directory") {
            let path = entry.expect("readable directory").path();
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if name.starts_with('.') || name == "target" {
                continue;
            }
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(root, &mut out);
    out
}

/// The repository explains itself: no file cites the texts the project was built from, which
/// a clone does not have (the design brief, its specs and fact sheets). Cite docs/design.md or
/// a docs/ page, or state the fact with its upstream source.
#[test]
fn no_file_cites_texts_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = repository_files(root);
    assert!(files.len() >= 50, "found only {} files", files.len());
    // Spelled in pieces, so that this file does not cite them itself.
    let citations = [
        ["DESIGN", " §"],
        ["DESIGN", ".md"],
        ["shared", "/"],
        ["facts", ".md"],
        ["facts", " §"],
        ["capi-", "facts"],
        ["harep-", "facts"],
        ["rapi-", "facts"],
    ]
    .map(|[a, b]| format!("{a}{b}"));
    let mut found = Vec::new();
    for file in &files {
        // Images and other binary files cite nothing.
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            for citation in &citations {
                if line.contains(citation.as_str()) {
                    let path = file.strip_prefix(root).unwrap_or(file);
                    found.push(format!("{}:{}: {citation}: {line}", path.display(), n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "these lines cite texts a clone of the repository does not have:\n{}",
        found.join("\n")
    );
}

/// Rule 12 holds by construction: every file the program reads as an input or writes goes
/// through `src/files.rs` (one reader: regular files only, bounded; one writer: atomic, through
/// symlinks, FIFOs in place, no lost update) and the lock through `src/lock.rs`'s use of it.
/// Outside their test modules, no other source file opens, reads, writes or renames a file.
#[test]
fn every_file_is_read_and_written_through_one_module() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let forbidden = [
        "fs::read_to_string",
        "fs::read(",
        "fs::write(",
        "fs::rename(",
        "fs::copy(",
        "File::create",
        "File::open(",
        "OpenOptions",
        "tempfile::",
        "read_to_end(",
    ];
    let mut found = Vec::new();
    for file in rust_files(&src) {
        if file.ends_with("src/files.rs")
            || file.ends_with("tests.rs")
            || file.components().any(|c| c.as_os_str() == "tests")
        {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("readable source");
        for (n, line) in outside_tests(&text).iter().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            // A word, not the end of a longer name (`FleetFile::open(`).
            let names = |word: &str| {
                line.match_indices(word).any(|(at, _)| {
                    !line[..at]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_')
                })
            };
            if let Some(word) = forbidden.iter().find(|w| names(w)) {
                found.push(format!("{}:{}: {word}: {line}", file.display(), n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "read and write files through crate::files (src/files.rs):\n{}",
        found.join("\n")
    );
}

/// The crate's references between its modules, read as the compiler reads them: every `use`
/// tree (groups expanded, renames followed) and every path in an expression, a type, a pattern
/// or a macro's arguments, resolved from the module it is written in to the item it reaches,
/// through the names other `use`s bring into scope (`use crate::x as y;` then `y::z`, a
/// `pub use` re-export, `super::name`).
///
/// A macro's arguments are read as tokens: any `a::b…` in them counts as a path, whatever the
/// macro makes of it. A lone name (`x`) is not a reference of its own: it reaches another
/// module only through a `use` of this one, which is.
///
/// A glob (`use crate::x::*;`) is a reference to `crate::x`, and brings the names `crate::x`
/// defines, declares or imports by name (not those of its own globs).
///
/// What it cannot see: paths inside string literals (`#[serde(with = "…")]`), and a macro's
/// paths that only its expansion forms. What it cannot
/// follow, it refuses: `#[path]` on a module, `include!`. Items under `#[cfg(test)]` or
/// `#[test]`, and files named `tests.rs`, are not read: test code may use anything as a
/// fixture.
mod imports {
    use proc_macro2::{Spacing, TokenStream, TokenTree};
    use std::collections::{BTreeSet, HashMap};
    use std::path::{Path, PathBuf};
    use syn::punctuated::Punctuated;
    use syn::visit::{self, Visit};

    /// A module's path from the crate root (`["ganeti", "health"]`; the root is empty).
    pub type ModPath = Vec<String>;

    /// One reference from a module to a path of the crate.
    #[derive(Debug, Clone)]
    pub struct Reference {
        pub file: PathBuf,
        pub line: usize,
        /// The module it is written in.
        pub from: ModPath,
        /// As written (`g::x`).
        pub written: String,
        /// The item it reaches, from the crate root (`["ganeti", "x"]`).
        pub to: Vec<String>,
        /// Every top module the path names on its way there: a re-export through the face
        /// names the face even when the item lives elsewhere.
        pub via: BTreeSet<String>,
    }

    impl Reference {
        pub fn to_text(&self) -> String {
            std::iter::once("crate")
                .chain(self.to.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join("::")
        }
    }

    /// A path as written, in the module it is written in.
    #[derive(Debug, Clone)]
    struct Written {
        file: PathBuf,
        line: usize,
        module: ModPath,
        segs: Vec<String>,
    }

    #[derive(Default)]
    pub struct Crate {
        modules: BTreeSet<ModPath>,
        /// The names `use` brings into a module, each to the path it was written as.
        aliases: HashMap<(ModPath, String), Written>,
        /// The items a module defines, and whether each names a type (or module) as well as
        /// a value: `use x::generate;` beside `fn generate` names a module and a function.
        items: HashMap<(ModPath, String), Namespace>,
        /// The modules each module's glob `use`s bring every name of, as written.
        globs: HashMap<ModPath, Vec<Written>>,
        written: Vec<Written>,
        /// The files read, and those left out as test code.
        pub read: BTreeSet<PathBuf>,
        pub skipped: BTreeSet<PathBuf>,
    }

    #[derive(Debug, Clone, Copy, Default)]
    struct Namespace {
        ty: bool,
        value: bool,
    }

    /// How deep names may lead to names: a cycle of `use`s is a compile error, this only
    /// keeps a cycle the checker misreads from looping.
    const DEPTH: usize = 32;

    impl Crate {
        /// The crate whose root file is `root` (`src/lib.rs`), its modules' files found as
        /// the compiler finds them; `read` gives a file's text, `None` when there is none.
        pub fn read(root: &Path, read: &dyn Fn(&Path) -> Option<String>) -> Result<Self, String> {
            let mut krate = Self::default();
            krate.modules.insert(Vec::new());
            let dir = root.parent().unwrap_or(Path::new("")).to_path_buf();
            krate.file(root, Vec::new(), dir, read)?;
            Ok(krate)
        }

        /// The top modules of the crate (the root's children).
        pub fn top_modules(&self) -> BTreeSet<String> {
            self.modules
                .iter()
                .filter(|m| m.len() == 1)
                .map(|m| m[0].clone())
                .collect()
        }

        fn file(
            &mut self,
            path: &Path,
            module: ModPath,
            dir: PathBuf,
            read: &dyn Fn(&Path) -> Option<String>,
        ) -> Result<(), String> {
            let text = read(path).ok_or_else(|| format!("{}: cannot read it", path.display()))?;
            let syntax = syn::parse_file(&text)
                .map_err(|e| format!("{}: does not parse: {e}", path.display()))?;
            self.read.insert(path.to_path_buf());
            let mut walker = Walker {
                krate: self,
                file: path.to_path_buf(),
                module,
                dir,
                read,
                error: None,
            };
            walker.visit_file(&syntax);
            walker.error.map_or(Ok(()), Err)
        }

        /// Every reference written in the crate that reaches a path of the crate.
        pub fn references(&self) -> Vec<Reference> {
            self.written
                .iter()
                .filter_map(|w| {
                    let mut trail = Vec::new();
                    let to = self.resolve(&w.module, &w.segs, &mut trail, 0);
                    let via: BTreeSet<String> = trail
                        .iter()
                        .filter_map(|p| p.first())
                        .filter(|top| self.modules.contains(&vec![(*top).clone()]))
                        .cloned()
                        .collect();
                    let to = to.or_else(|| trail.last().cloned())?;
                    Some(Reference {
                        file: w.file.clone(),
                        line: w.line,
                        from: w.module.clone(),
                        written: w.segs.join("::"),
                        to,
                        via,
                    })
                })
                .collect()
        }

        /// Where `segs`, written in `module`, leads from the crate root, or `None` when it
        /// leaves the crate (std, another crate) or is a local name; `trail` gets every path
        /// of the crate it passes through.
        fn resolve(
            &self,
            module: &ModPath,
            segs: &[String],
            trail: &mut Vec<Vec<String>>,
            depth: usize,
        ) -> Option<Vec<String>> {
            if depth > DEPTH {
                return None;
            }
            let (first, mut rest) = segs.split_first()?;
            let mut abs = match first.as_str() {
                "crate" => Vec::new(),
                "self" => module.clone(),
                "super" => {
                    let mut m = module.clone();
                    m.pop()?;
                    m
                }
                name => {
                    let mut child = module.clone();
                    child.push(name.to_string());
                    if self.modules.contains(&child) || self.own(module, name, rest.is_empty()) {
                        child
                    } else if let Some(alias) =
                        self.aliases.get(&(module.clone(), name.to_string()))
                    {
                        self.resolve(&alias.module, &alias.segs, trail, depth + 1)?
                    } else {
                        self.through_glob(module, name, rest.is_empty(), trail, depth)?
                    }
                }
            };
            if matches!(first.as_str(), "self" | "super") {
                while rest.first().is_some_and(|s| s == "super") {
                    abs.pop()?;
                    rest = &rest[1..];
                }
            }
            abs.extend(rest.iter().cloned());
            // Follow the names `use` brought into the modules along the path.
            for _ in 0..DEPTH {
                trail.push(abs.clone());
                let Some(at) = (0..abs.len()).find(|&i| !self.modules.contains(&abs[..=i])) else {
                    return Some(abs);
                };
                let module = abs[..at].to_vec();
                if self.own(&module, &abs[at], at + 1 == abs.len()) {
                    return Some(abs);
                }
                let last = at + 1 == abs.len();
                let mut target = match self.aliases.get(&(module.clone(), abs[at].clone())) {
                    Some(alias) => self.resolve(&alias.module, &alias.segs, trail, depth + 1)?,
                    None => match self.through_glob(&module, &abs[at], last, trail, depth) {
                        Some(target) => target,
                        None => return Some(abs),
                    },
                };
                target.extend(abs[at + 1..].iter().cloned());
                abs = target;
            }
            None
        }

        /// `name` in `module` as a glob `use` of the module brings it: the first module globbed
        /// that has the name as a module, an item or a name of its own `use`s.
        fn through_glob(
            &self,
            module: &ModPath,
            name: &str,
            last: bool,
            trail: &mut Vec<Vec<String>>,
            depth: usize,
        ) -> Option<Vec<String>> {
            for glob in self.globs.get(module).into_iter().flatten() {
                let mut seen = Vec::new();
                let Some(mut from) = self.resolve(&glob.module, &glob.segs, &mut seen, depth + 1)
                else {
                    continue;
                };
                let key = (from.clone(), name.to_string());
                from.push(name.to_string());
                if self.modules.contains(&from)
                    || self.own(&key.0, name, last)
                    || self.aliases.contains_key(&key)
                {
                    trail.extend(seen);
                    return Some(from);
                }
            }
            None
        }

        /// Whether `name` in `module` is the module's own item rather than a name a `use`
        /// brought: a path's last name may be a value (`sub::generate()` calls the function
        /// beside a module imported as `generate`), the names before it are types or modules.
        fn own(&self, module: &ModPath, name: &str, last: bool) -> bool {
            self.items
                .get(&(module.clone(), name.to_string()))
                .is_some_and(|ns| ns.ty || (last && ns.value))
        }
    }

    /// Whether an item is compiled only for tests: `#[test]`, `#[cfg(test)]`,
    /// `#[cfg(all(test, …))]`.
    fn test_only(attrs: &[syn::Attribute]) -> bool {
        fn requires_test(meta: &syn::Meta) -> bool {
            match meta {
                syn::Meta::Path(p) => p.is_ident("test"),
                syn::Meta::List(l) if l.path.is_ident("all") => l
                    .parse_args_with(Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated)
                    .is_ok_and(|all| all.iter().any(requires_test)),
                _ => false,
            }
        }
        attrs.iter().any(|a| {
            a.path().is_ident("test")
                || (a.path().is_ident("cfg")
                    && a.parse_args::<syn::Meta>().is_ok_and(|m| requires_test(&m)))
        })
    }

    fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
        use syn::Item::*;
        match item {
            Const(i) => &i.attrs,
            Enum(i) => &i.attrs,
            ExternCrate(i) => &i.attrs,
            Fn(i) => &i.attrs,
            ForeignMod(i) => &i.attrs,
            Impl(i) => &i.attrs,
            Macro(i) => &i.attrs,
            Mod(i) => &i.attrs,
            Static(i) => &i.attrs,
            Struct(i) => &i.attrs,
            Trait(i) => &i.attrs,
            TraitAlias(i) => &i.attrs,
            Type(i) => &i.attrs,
            Union(i) => &i.attrs,
            Use(i) => &i.attrs,
            _ => &[],
        }
    }

    struct Walker<'k, 'r> {
        krate: &'k mut Crate,
        file: PathBuf,
        module: ModPath,
        /// Where the files of this module's children are.
        dir: PathBuf,
        read: &'r dyn Fn(&Path) -> Option<String>,
        error: Option<String>,
    }

    impl Walker<'_, '_> {
        fn write(&mut self, line: usize, segs: Vec<String>) {
            self.krate.written.push(Written {
                file: self.file.clone(),
                line,
                module: self.module.clone(),
                segs,
            });
        }

        /// The file of the child module `name` declared by `mod name;`.
        fn module_file(&self, name: &str) -> Option<PathBuf> {
            [
                self.dir.join(format!("{name}.rs")),
                self.dir.join(name).join("mod.rs"),
            ]
            .into_iter()
            .find(|p| (self.read)(p).is_some())
        }

        /// One `use` tree under `prefix`: each leaf is a reference, and a name in the module.
        fn use_tree(&mut self, mut prefix: Vec<String>, tree: &syn::UseTree) {
            let (ident, name) = match tree {
                syn::UseTree::Path(p) => {
                    prefix.push(p.ident.to_string());
                    return self.use_tree(prefix, &p.tree);
                }
                syn::UseTree::Group(g) => {
                    for tree in &g.items {
                        self.use_tree(prefix.clone(), tree);
                    }
                    return;
                }
                syn::UseTree::Glob(g) => {
                    let line = g.star_token.span.start().line;
                    self.krate
                        .globs
                        .entry(self.module.clone())
                        .or_default()
                        .push(Written {
                            file: self.file.clone(),
                            line,
                            module: self.module.clone(),
                            segs: prefix.clone(),
                        });
                    return self.write(line, prefix);
                }
                syn::UseTree::Name(n) => (&n.ident, n.ident.to_string()),
                syn::UseTree::Rename(r) => (&r.ident, r.rename.to_string()),
            };
            let line = ident.span().start().line;
            // `use a::b::{self}` is `a::b`, and names `b` unless renamed.
            let name = if ident != "self" {
                prefix.push(ident.to_string());
                name
            } else if name == "self" {
                prefix.last().cloned().unwrap_or(name)
            } else {
                name
            };
            if name != "_" {
                self.krate.aliases.insert(
                    (self.module.clone(), name),
                    Written {
                        file: self.file.clone(),
                        line,
                        module: self.module.clone(),
                        segs: prefix.clone(),
                    },
                );
            }
            self.write(line, prefix);
        }

        /// The paths in a macro's tokens (`ident::ident…`, `$crate::…` included), read as
        /// paths whatever the macro makes of them.
        fn tokens(&mut self, tokens: TokenStream) {
            let trees: Vec<TokenTree> = tokens.into_iter().collect();
            let colon2 = |at: usize| {
                matches!((trees.get(at), trees.get(at + 1)),
                    (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                        if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':')
            };
            let mut at = 0;
            while at < trees.len() {
                match &trees[at] {
                    TokenTree::Group(g) => {
                        self.tokens(g.stream());
                        at += 1;
                    }
                    TokenTree::Ident(first) => {
                        let mut segs = vec![first.to_string()];
                        at += 1;
                        while colon2(at) {
                            let Some(TokenTree::Ident(next)) = trees.get(at + 2) else {
                                break;
                            };
                            segs.push(next.to_string());
                            at += 3;
                        }
                        if segs.len() > 1 {
                            self.write(first.span().start().line, segs);
                        }
                    }
                    _ => at += 1,
                }
            }
        }
    }

    impl<'ast> Visit<'ast> for Walker<'_, '_> {
        fn visit_item(&mut self, item: &'ast syn::Item) {
            if !test_only(item_attrs(item)) {
                let (ident, ns) = match item {
                    syn::Item::Fn(i) => (&i.sig.ident, (false, true)),
                    syn::Item::Const(i) => (&i.ident, (false, true)),
                    syn::Item::Static(i) => (&i.ident, (false, true)),
                    syn::Item::Struct(i) => (&i.ident, (true, true)),
                    syn::Item::Enum(i) => (&i.ident, (true, false)),
                    syn::Item::Union(i) => (&i.ident, (true, false)),
                    syn::Item::Trait(i) => (&i.ident, (true, false)),
                    syn::Item::Type(i) => (&i.ident, (true, false)),
                    _ => return visit::visit_item(self, item),
                };
                let own = self
                    .krate
                    .items
                    .entry((self.module.clone(), ident.to_string()))
                    .or_default();
                own.ty |= ns.0;
                own.value |= ns.1;
                visit::visit_item(self, item);
            } else if let syn::Item::Mod(m) = item
                && m.content.is_none()
                && let Some(path) = self.module_file(&m.ident.to_string())
            {
                self.krate.skipped.insert(path);
            }
        }

        fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
            let attrs = match item {
                syn::ImplItem::Const(i) => &i.attrs,
                syn::ImplItem::Fn(i) => &i.attrs,
                syn::ImplItem::Type(i) => &i.attrs,
                syn::ImplItem::Macro(i) => &i.attrs,
                _ => return visit::visit_impl_item(self, item),
            };
            if !test_only(attrs) {
                visit::visit_impl_item(self, item);
            }
        }

        fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
            let name = item.ident.to_string();
            let mut module = self.module.clone();
            module.push(name.clone());
            let dir = self.dir.join(&name);
            if let Some((_, items)) = &item.content {
                self.krate.modules.insert(module.clone());
                let outer_module = std::mem::replace(&mut self.module, module);
                let outer_dir = std::mem::replace(&mut self.dir, dir);
                for item in items {
                    self.visit_item(item);
                }
                self.module = outer_module;
                self.dir = outer_dir;
                return;
            }
            // A module elsewhere, or code pasted from another file, would escape the rules.
            if item.attrs.iter().any(|a| a.path().is_ident("path")) {
                self.error.get_or_insert(format!(
                    "{}: `#[path]` on `mod {name}`: tests/it/layout.rs does not follow it",
                    self.file.display(),
                ));
                return;
            }
            let Some(path) = self.module_file(&name) else {
                self.error.get_or_insert(format!(
                    "{}: no file for `mod {name};` ({name}.rs or {name}/mod.rs beside it)",
                    self.file.display(),
                ));
                return;
            };
            if path.ends_with("tests.rs") {
                self.krate.skipped.insert(path);
                return;
            }
            self.krate.modules.insert(module.clone());
            if let Err(e) = self.krate.file(&path, module, dir, self.read) {
                self.error.get_or_insert(e);
            }
        }

        fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
            // `use ::name` is another crate's.
            if item.leading_colon.is_none() {
                self.use_tree(Vec::new(), &item.tree);
            }
        }

        fn visit_path(&mut self, path: &'ast syn::Path) {
            // A lone name reaches another module only through a `use` in this one, which is a
            // reference already; alone it is as often a local variable.
            if path.leading_colon.is_none()
                && path.segments.len() > 1
                && let Some(first) = path.segments.first()
            {
                let segs = path.segments.iter().map(|s| s.ident.to_string()).collect();
                self.write(first.ident.span().start().line, segs);
            }
            visit::visit_path(self, path);
        }

        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            if mac.path.is_ident("include") {
                self.error.get_or_insert(format!(
                    "{}: `include!` pastes code tests/it/layout.rs does not read",
                    self.file.display(),
                ));
            }
            self.visit_path(&mac.path);
            self.tokens(mac.tokens.clone());
        }

        // `pub(super)` and `pub(in path)` say who may see an item, not what it uses.
        fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}
    }
}

/// What a top module of `src/` is to the rules between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A family's folder: a name of `autorepair::FAMILIES`, or the toy family's.
    Family,
    /// `src/face`, the command line, which reaches the families through `FAMILIES`.
    Face,
    /// Everything else: the code families and the face share (`plug`, `k8s`, `sabakan`, …).
    Shared,
}

/// The rules of docs/architecture.md ("Its files"), by number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rule {
    /// 1. No family imports another family.
    FamilyImportsFamily = 1,
    /// 2. `src/sabakan`, the cluster-config generator and client, imports no family.
    GeneratorImportsFamily = 2,
    /// 3. Shared code imports no family and not the face.
    SharedImportsFamilyOrFace = 3,
    /// 4. Families and `plug` never import the face.
    ImportsTheFace = 4,
    /// 5. The face names no family but through `crate::FAMILIES`.
    FaceNamesFamily = 5,
}

/// The module every family plugs into, named apart by rule 4.
const PLUG: &str = "plug";
/// The cluster-config generator, named apart by rule 2.
const GENERATOR: &str = "sabakan";
const FACE: &str = "face";

fn role(families: &BTreeSet<String>, top: &str) -> Role {
    if families.contains(top) {
        Role::Family
    } else if top == FACE {
        Role::Face
    } else {
        Role::Shared
    }
}

/// The rule a reference from top module `from` to top module `to` breaks, if any.
fn broken(families: &BTreeSet<String>, from: &str, to: &str) -> Option<Rule> {
    if from == to {
        return None;
    }
    match (role(families, from), role(families, to)) {
        (Role::Family, Role::Family) => Some(Rule::FamilyImportsFamily),
        (Role::Family, Role::Face) => Some(Rule::ImportsTheFace),
        (Role::Face, Role::Family) => Some(Rule::FaceNamesFamily),
        (Role::Shared, Role::Family) if from == GENERATOR => Some(Rule::GeneratorImportsFamily),
        (Role::Shared, Role::Face) if from == PLUG => Some(Rule::ImportsTheFace),
        (Role::Shared, Role::Family | Role::Face) => Some(Rule::SharedImportsFamilyOrFace),
        _ => None,
    }
}

/// A reference that breaks a rule.
#[derive(Debug, Clone)]
struct Violation {
    rule: Rule,
    /// The file, from the top of the repository.
    file: String,
    line: usize,
    written: String,
    to: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.written)?;
        if self.written != self.to {
            write!(f, " (reaches {})", self.to)?;
        }
        Ok(())
    }
}

/// Every reference of `krate` that breaks a rule, files named from `root`.
fn violations(krate: &imports::Crate, families: &BTreeSet<String>, root: &Path) -> Vec<Violation> {
    let mut out = Vec::new();
    for r in krate.references() {
        // The crate root (lib.rs) lists the families; it is no module's neighbour.
        let Some(from) = r.from.first() else {
            continue;
        };
        for to in &r.via {
            if let Some(rule) = broken(families, from, to) {
                out.push(Violation {
                    rule,
                    file: r
                        .file
                        .strip_prefix(root)
                        .unwrap_or(&r.file)
                        .display()
                        .to_string(),
                    line: r.line,
                    written: r.written.clone(),
                    to: r.to_text(),
                });
            }
        }
    }
    out
}

/// The families registered, and the toy family registered by examples/toy_family.rs.
fn family_names() -> BTreeSet<String> {
    use autorepair::face::{Entry, Registered};
    autorepair::FAMILIES
        .iter()
        .copied()
        .chain([&Entry::<autorepair::toy::Toy>::NEW as &dyn Registered])
        .map(|f| f.family().to_string())
        .collect()
}

/// The sources of `src/`, their references and the families, read once for all the rules.
struct Sources {
    root: PathBuf,
    krate: imports::Crate,
    families: BTreeSet<String>,
}

fn sources() -> &'static Sources {
    static SOURCES: OnceLock<Sources> = OnceLock::new();
    SOURCES.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let krate = imports::Crate::read(&root.join("src/lib.rs"), &|p| {
            std::fs::read_to_string(p).ok()
        })
        .unwrap_or_else(|e| panic!("the sources must parse: {e}"));
        let families = family_names();
        let tops = krate.top_modules();
        for family in &families {
            assert!(
                tops.contains(family),
                "the family {family} has no folder src/{family}/ (its recipe in docs/architecture.md)"
            );
        }
        Sources {
            root,
            krate,
            families,
        }
    })
}

/// The violations of one rule, as the failure message's lines.
fn unexpected(rule: Rule) -> Vec<String> {
    let s = sources();
    violations(&s.krate, &s.families, &s.root)
        .into_iter()
        .filter(|v| v.rule == rule)
        .map(|v| v.to_string())
        .collect()
}

/// The parser reads every source file of `src/` but `main.rs` and the test code: a module it
/// could not find would be a module no rule checks.
#[test]
fn the_import_rules_read_every_source_file() {
    let s = sources();
    let src = s.root.join("src");
    let covered = |file: &Path| {
        s.krate.read.contains(file)
            || s.krate.skipped.iter().any(|skipped| {
                // A skipped module's children are in the folder named like its file.
                let folder = if skipped.ends_with("mod.rs") {
                    skipped.parent().map(Path::to_path_buf)
                } else {
                    Some(skipped.with_extension(""))
                };
                file == skipped || folder.is_some_and(|f| file.starts_with(f))
            })
    };
    let missed: Vec<String> = rust_files(&src)
        .into_iter()
        .filter(|f| f != &src.join("main.rs") && !covered(f))
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        missed.is_empty(),
        "these files are in no module the import rules read (a `mod` the parser does not \
         follow?):\n{}",
        missed.join("\n")
    );
    // The rules name these modules; each must still be there.
    let tops = s.krate.top_modules();
    for top in [FACE, PLUG, GENERATOR, "k8s"] {
        assert!(tops.contains(top), "src/{top} is gone: update the rules");
    }
}

#[test]
fn rule_1_no_family_imports_another_family() {
    let found = unexpected(Rule::FamilyImportsFamily);
    assert!(
        found.is_empty(),
        "a family imports another family (move what they share to shared code):\n{}",
        found.join("\n")
    );
}

#[test]
fn rule_2_the_cluster_config_generator_imports_no_family() {
    let found = unexpected(Rule::GeneratorImportsFamily);
    assert!(
        found.is_empty(),
        "src/sabakan imports a family (it is shared code; take the family's value through a \
         parameter):\n{}",
        found.join("\n")
    );
}

#[test]
fn rule_3_shared_code_imports_no_family_and_not_the_face() {
    let found = unexpected(Rule::SharedImportsFamilyOrFace);
    assert!(
        found.is_empty(),
        "shared code imports a family or the face (take the family's value through a parameter \
         or the registry; what only the face uses belongs in src/face):\n{}",
        found.join("\n")
    );
}

#[test]
fn rule_4_families_and_plug_never_import_the_face() {
    let found = unexpected(Rule::ImportsTheFace);
    assert!(
        found.is_empty(),
        "a family (or the module families plug into) imports the face: the face imports the \
         families, and an import back makes one circle of them all:\n{}",
        found.join("\n")
    );
}

#[test]
fn rule_5_the_face_names_no_family_but_through_families() {
    let found = unexpected(Rule::FaceNamesFamily);
    assert!(
        found.is_empty(),
        "the face names a family (it should reach it through crate::FAMILIES):\n{}",
        found.join("\n")
    );
}

/// The references a file of a small crate makes outside its own top module, as
/// "reached item via the other top modules named on the way".
fn crossing(files: &[(&str, &str)], file: &str) -> Vec<String> {
    let files: std::collections::HashMap<PathBuf, String> = files
        .iter()
        .map(|(p, t)| (PathBuf::from(p), (*t).to_string()))
        .collect();
    let krate = imports::Crate::read(Path::new("src/lib.rs"), &|p| files.get(p).cloned())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut out: Vec<String> = krate
        .references()
        .into_iter()
        .filter(|r| r.file == Path::new(file))
        .filter_map(|r| {
            let own = r.from.first()?;
            let others: Vec<&str> = r
                .via
                .iter()
                .filter(|t| *t != own)
                .map(String::as_str)
                .collect();
            (!others.is_empty()).then(|| format!("{} via {}", r.to_text(), others.join(",")))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The resolver on small crates: what each snippet reaches outside its module's folder, where
/// the old line-by-line check saw nothing (grouped and nested `use`s, paths split over lines,
/// renames, re-exports, `super::super`, macro arguments).
#[test]
fn the_resolver_follows_every_way_of_naming_a_module() {
    // A crate with a family of its own, the face and shared code; each row writes one more
    // file, src/machines/mod.rs unless it says otherwise.
    let base = [
        (
            "src/lib.rs",
            "pub mod face; pub mod ganeti; pub mod k8s; pub mod machines; pub use face::cli;",
        ),
        ("src/face/mod.rs", "pub mod cli;"),
        (
            "src/face/cli.rs",
            "pub use crate::k8s::Format; pub struct Own;",
        ),
        ("src/ganeti/mod.rs", "pub mod generate; pub fn x() {}"),
        ("src/ganeti/generate.rs", "pub struct Spec;"),
        ("src/k8s/mod.rs", "pub mod deep; pub struct Format;"),
        ("src/k8s/deep.rs", ""),
    ];
    let ganeti_x = "crate::ganeti::x via ganeti";
    let rows: &[(&str, &str, &str, &[&str])] = &[
        (
            "a grouped use",
            "src/machines/mod.rs",
            "use crate::{ganeti::x, face::cli::Own};",
            &["crate::face::cli::Own via face", ganeti_x],
        ),
        (
            "nested groups, over lines",
            "src/machines/mod.rs",
            "use crate::{\n k8s::{Format},\n ganeti::{\n  generate::{Spec},\n  x,\n },\n};",
            &[
                "crate::ganeti::generate::Spec via ganeti",
                ganeti_x,
                "crate::k8s::Format via k8s",
            ],
        ),
        (
            "`self` in a group, and a module renamed",
            "src/machines/mod.rs",
            "use crate::ganeti::{self, generate::{self as g}};\nfn f(_: g::Spec) {}",
            &[
                "crate::ganeti via ganeti",
                "crate::ganeti::generate via ganeti",
                "crate::ganeti::generate::Spec via ganeti",
            ],
        ),
        (
            "`super::super` from a module's child",
            "src/k8s/deep.rs",
            "fn f() { super::super::ganeti::x(); }",
            &[ganeti_x],
        ),
        (
            "a path inline, oddly spaced over lines",
            "src/machines/mod.rs",
            "fn f() { let _ = crate\n ::ganeti ::\n x(); }",
            &[ganeti_x],
        ),
        (
            "a renamed module, used later",
            "src/machines/mod.rs",
            "use crate::ganeti as g;\nfn f() { g::x(); }",
            &["crate::ganeti via ganeti", ganeti_x],
        ),
        (
            "a family's item re-exported by shared code",
            "src/k8s/deep.rs",
            "pub use crate::ganeti::generate::Spec as Shared;",
            &["crate::ganeti::generate::Spec via ganeti"],
        ),
        (
            "shared code's re-export of the face's item reaches the face",
            "src/k8s/deep.rs",
            "fn f(_: crate::cli::Own) {}",
            &["crate::face::cli::Own via face"],
        ),
        (
            "the face's re-export of shared code still names the face",
            "src/machines/mod.rs",
            "fn f(_: crate::cli::Format) {}",
            &["crate::k8s::Format via face,k8s"],
        ),
        (
            "a type, a pattern, a trait bound, a generic argument",
            "src/machines/mod.rs",
            "fn f<T: crate::face::cli::Tr>(_: Vec<super::ganeti::generate::Spec>) {\n \
             let crate::k8s::Format = crate::k8s::Format; }",
            &[
                "crate::face::cli::Tr via face",
                "crate::ganeti::generate::Spec via ganeti",
                "crate::k8s::Format via k8s",
            ],
        ),
        (
            "macro arguments and a macro's own path; `$crate` in a macro's body",
            "src/machines/mod.rs",
            "fn f() { println!(\"{:?}\", crate::ganeti::x()); crate::face::m!(); }\n\
             macro_rules! s { () => { $crate::k8s::Format } }",
            &[
                "crate::face::cli::m via face",
                ganeti_x,
                "crate::k8s::Format via k8s",
            ],
        ),
        (
            "a glob names its module",
            "src/machines/mod.rs",
            "use crate::ganeti::*;",
            &["crate::ganeti via ganeti"],
        ),
        (
            "a name a glob of the crate root brings",
            "src/machines/mod.rs",
            "use crate::*;\nfn f() { ganeti::x(); }",
            &[ganeti_x],
        ),
        (
            "a family's items re-exported by a glob, then reached through it",
            "src/k8s/deep.rs",
            "pub use crate::ganeti::*;\nfn f() { self::generate::Spec; }",
            &[
                "crate::ganeti via ganeti",
                "crate::ganeti::generate::Spec via ganeti",
            ],
        ),
        (
            "a use in a function body, then its name",
            "src/machines/mod.rs",
            "fn f() { use crate::ganeti::generate; let _ = generate::Spec; }",
            &[
                "crate::ganeti::generate via ganeti",
                "crate::ganeti::generate::Spec via ganeti",
            ],
        ),
        (
            "a module of its own: a function named like an imported module is its own",
            "src/machines/mod.rs",
            "mod sub { use crate::ganeti::generate; pub fn generate() {} }\n\
             fn f() { sub::generate(); }",
            &["crate::ganeti::generate via ganeti"],
        ),
        (
            "a child module's file, reached by its parent's `mod`",
            "src/machines/sub.rs",
            "fn f() { crate::ganeti::x() }",
            &[ganeti_x],
        ),
        (
            "test code may use anything; code for tests and the testkit may not",
            "src/machines/mod.rs",
            "#[cfg(test)] mod tests { use crate::ganeti::x; }\n\
             #[cfg(test)] mod file_tests;\n\
             #[cfg(all(test, unix))] use crate::ganeti::generate;\n\
             #[test] fn t() { crate::face::cli::Own; }\n\
             impl S { #[cfg(test)] fn t() { crate::face::cli::Own; } }\n\
             #[cfg(any(test, feature = \"testkit\"))] use crate::ganeti::x;",
            &[ganeti_x],
        ),
        (
            "other crates, local names and paths in strings are not the crate's",
            "src/machines/mod.rs",
            "use std::fmt; use ::ganeti::x;\n\
             fn f(ganeti: u8, x: fmt::Error) -> u8 { let _ = \"crate::ganeti::x\"; ganeti }",
            &[],
        ),
    ];
    for (what, file, text, expected) in rows {
        let mut files = base.to_vec();
        // A family whose folder holds the file the row writes.
        files.push(("src/machines/mod.rs", "mod sub;"));
        files.push(("src/machines/sub.rs", ""));
        files.retain(|(p, _)| p != file);
        files.push((file, text));
        // The macro the row on macros calls, where the face would define it.
        files.retain(|(p, _)| *p != "src/face/mod.rs");
        files.push(("src/face/mod.rs", "pub mod cli; pub use cli::m;"));
        assert_eq!(crossing(&files, file), *expected, "{what}:\n{text}");
    }
}

/// What the parser cannot follow it refuses, naming the file, rather than read past it.
#[test]
fn the_parser_refuses_what_it_cannot_follow() {
    let rows = [
        ("mod elsewhere;", "src/lib.rs: no file for `mod elsewhere;`"),
        (
            "#[path = \"x.rs\"] mod m;",
            "src/lib.rs: `#[path]` on `mod m`",
        ),
        (
            "fn f() { include!(\"x.rs\"); }",
            "src/lib.rs: `include!` pastes code",
        ),
        ("fn f( {", "src/lib.rs: does not parse"),
    ];
    for (text, said) in rows {
        let read = |p: &Path| (p == Path::new("src/lib.rs")).then(|| text.to_string());
        match imports::Crate::read(Path::new("src/lib.rs"), &read) {
            Ok(_) => panic!("read {text:?}"),
            Err(e) => assert!(e.starts_with(said), "{text:?}: {e}"),
        }
    }
}

/// Which rule a reference between two top modules breaks.
#[test]
fn the_rules_between_top_modules() {
    let families: BTreeSet<String> = ["ganeti", "machines"].map(String::from).into();
    let rows = [
        ("machines", "ganeti", Some(Rule::FamilyImportsFamily)),
        ("machines", "face", Some(Rule::ImportsTheFace)),
        ("machines", "plug", None),
        ("machines", "sabakan", None),
        ("machines", "k8s", None),
        ("machines", "machines", None),
        ("sabakan", "machines", Some(Rule::GeneratorImportsFamily)),
        ("sabakan", "face", Some(Rule::SharedImportsFamilyOrFace)),
        ("sabakan", "k8s", None),
        ("k8s", "ganeti", Some(Rule::SharedImportsFamilyOrFace)),
        ("k8s", "face", Some(Rule::SharedImportsFamilyOrFace)),
        ("report", "face", Some(Rule::SharedImportsFamilyOrFace)),
        ("plug", "face", Some(Rule::ImportsTheFace)),
        ("plug", "ganeti", Some(Rule::SharedImportsFamilyOrFace)),
        ("face", "ganeti", Some(Rule::FaceNamesFamily)),
        ("face", "sabakan", None),
        ("face", "plug", None),
    ];
    for (from, to, rule) in rows {
        assert_eq!(broken(&families, from, to), rule, "{from} -> {to}");
    }
}
