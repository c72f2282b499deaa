//! No import circles: in every library crate under `crates/`, the files' `use` lines must not reach
//! each other around a loop (issue 37). Each file of `src/` is a node; an edge X → Y when X's code
//! (before its `#[cfg(test)]`, comments left out) names Y through `crate::Y`, `crate::{…, Y}`,
//! `crate::NAME` where `lib.rs` re-exports `NAME` from `Y`, `use super::…` (its parent, or the
//! sibling it names), or `Y::` for a child module `Y` it declares. `lib.rs` is the facade: its
//! `mod` and `use` lines are no edges.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every crate's cycles, or `Ok` when there are none.
pub(crate) fn check(root: &Path) -> Result<(), String> {
    let mut found = Vec::new();
    let crates = std::fs::read_dir(root.join("crates")).map_err(|e| format!("reading crates/: {e}"))?;
    let mut dirs: Vec<_> = crates.flatten().map(|entry| entry.path().join("src")).collect();
    dirs.sort();
    for src in dirs.into_iter().filter(|src| src.join("lib.rs").is_file()) {
        for cycle in cycles(&read_files(&src)?) {
            found.push(format!("{}: {}", src.display(), cycle.join(" <-> ")));
        }
    }
    if found.is_empty() { Ok(()) } else { Err(format!("import cycles:\n{}", found.join("\n"))) }
}

/// The files of `src`, by module path (`lib`, `server`, `client::plan`), as their text.
fn read_files(src: &Path) -> Result<BTreeMap<String, String>, String> {
    let mut files = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).map_err(|e| format!("reading {}: {e}", dir.display()))?.flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(src).map_err(|e| e.to_string())?.with_extension("");
                let module: Vec<String> =
                    relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
                let text =
                    std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
                files.insert(module.join("::"), text);
            }
        }
    }
    Ok(files)
}

/// The code of a file: up to its first `#[cfg(test)]` (or `#[cfg(all(test…`), comments left out.
fn code(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test") || trimmed.starts_with("#[cfg(all(test") {
            break;
        }
        out.push_str(line.split("//").next().unwrap_or_default());
        out.push('\n');
    }
    out
}

/// The identifiers in `text`.
fn idents(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty())
}

/// What follows each `prefix` in `text`: the identifier, or every identifier of a `{…}` group.
fn named_after<'t>(text: &'t str, prefix: &str) -> Vec<&'t str> {
    let mut names = Vec::new();
    for (at, _) in text.match_indices(prefix) {
        if text[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &text[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            names.extend(idents(&group[..group.find('}').unwrap_or(group.len())]));
        } else if let Some(name) = idents(rest).next().filter(|_| !rest.starts_with(char::is_whitespace)) {
            names.push(name);
        }
    }
    names
}

/// Each file's edges.
fn edges(files: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let lib = code(files.get("lib").map_or("", String::as_str));
    let mut root_names: BTreeMap<&str, &str> = BTreeMap::new();
    for line in lib.lines() {
        if let Some(rest) = line.trim_start().strip_prefix("pub use ") {
            let mut words = idents(rest);
            if let Some(module) = words.next().filter(|m| files.contains_key(*m)) {
                for name in words {
                    root_names.entry(name).or_insert(module);
                }
            }
        }
    }
    let mut all = BTreeMap::new();
    for (module, text) in files {
        let mut text = code(text);
        if module == "lib" {
            text = text
                .lines()
                .filter(|l| {
                    let l = l.trim_start().trim_start_matches("pub ");
                    !(l.starts_with("mod ") || l.starts_with("use "))
                })
                .collect::<Vec<_>>()
                .join("\n");
        }
        let mut found = BTreeSet::new();
        for name in named_after(&text, "crate::") {
            let target =
                if files.contains_key(name) { name } else { root_names.get(name).copied().unwrap_or("lib") };
            found.insert(target.to_owned());
        }
        let parent = module.rsplit_once("::").map_or("lib", |(parent, _)| parent);
        for line in text.lines().filter(|l| !l.starts_with(char::is_whitespace)) {
            let line = line.strip_prefix("pub ").or_else(|| line.strip_prefix("pub(crate) ")).unwrap_or(line);
            if let Some(rest) = line.strip_prefix("use super::") {
                let name = idents(rest).next().unwrap_or_default();
                let sibling = if parent == "lib" { name.to_owned() } else { format!("{parent}::{name}") };
                found.insert(if files.contains_key(&sibling) { sibling } else { parent.to_owned() });
            }
        }
        if module != "lib" {
            for line in text.lines() {
                let line = line.trim_start();
                let line =
                    line.strip_prefix("pub ").or_else(|| line.strip_prefix("pub(crate) ")).unwrap_or(line);
                if let Some(child) = line.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
                    let full = format!("{module}::{child}");
                    if files.contains_key(&full) && !named_after(&text, &format!("{child}::")).is_empty() {
                        found.insert(full);
                    }
                }
            }
        }
        found.remove(module);
        all.insert(module.clone(), found);
    }
    all
}

/// The strongly connected components of more than one file (Tarjan's algorithm), each sorted.
fn cycles(files: &BTreeMap<String, String>) -> Vec<Vec<String>> {
    struct Tarjan<'g> {
        edges: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Tarjan<'g> {
        fn visit(&mut self, v: &'g str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            for w in self.edges.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let at = self.stack.iter().rposition(|x| *x == v).unwrap_or_default();
                let mut component: Vec<String> = self.stack.drain(at..).map(str::to_owned).collect();
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let edges = edges(files);
    let mut tarjan = Tarjan {
        edges: &edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !tarjan.index.contains_key(v.as_str()) {
            tarjan.visit(v);
        }
    }
    tarjan.found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crate_of(files: &[(&str, &str)]) -> BTreeMap<String, String> {
        files.iter().map(|(m, t)| ((*m).to_owned(), (*t).to_owned())).collect()
    }

    #[test]
    fn a_loop_through_crate_paths_re_exports_and_super_is_found() {
        let files = crate_of(&[
            ("lib", "mod a;\nmod b;\nmod c;\npub use c::Thing;\n"),
            ("a", "use crate::b::B;\n"),
            ("b", "use crate::{Thing, other};\n"),
            ("c", "use crate::a::A; // crate::b in a comment is no edge\n"),
        ]);
        assert_eq!(cycles(&files), [["a", "b", "c"]]);
        let files = crate_of(&[
            ("lib", "mod p;\n"),
            ("p", "mod q;\nfn f() { q::g(); }\n"),
            ("p::q", "use super::P;\n"),
        ]);
        assert_eq!(cycles(&files), [["p", "p::q"]]);
    }

    #[test]
    fn tests_and_the_facade_are_no_edges() {
        let files = crate_of(&[
            ("lib", "mod a;\nmod b;\npub use a::A;\npub use b::B;\n"),
            ("a", "use crate::b::B;\n"),
            ("b", "fn f() {}\n#[cfg(test)]\nmod tests { use crate::a::A; }\n"),
        ]);
        assert!(cycles(&files).is_empty());
    }

    /// The workspace itself: no crate under `crates/` has an import cycle.
    #[test]
    fn the_crates_have_no_import_cycles() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root");
        check(root).unwrap_or_else(|e| panic!("{e}"));
    }
}
