//! The crate's floors (ARCHITECTURE.md): every file of `src/` sits on one floor and imports only
//! from floors below its own, so no two files import each other. Read from the `crate::` paths of
//! the code itself; a file's unit tests (from its `#[cfg(test)]` on) may reach any floor.

use std::collections::BTreeMap;
use std::path::Path;

/// Bottom up, as ARCHITECTURE.md draws them.
const FLOORS: &[&[&str]] = &[
    &["keys", "profile", "secret", "text", "time"],
    &["error", "model"],
    &["raw"],
    &["json", "rules"],
    &["extended"],
    &["walk"],
    &["validate", "check"],
    &["answer", "typed"],
];

/// The code of a file: its lines before `#[cfg(test)]`, without comments.
fn code(source: &str) -> impl Iterator<Item = (usize, &str)> {
    source
        .lines()
        .enumerate()
        .take_while(|(_, line)| line.trim() != "#[cfg(test)]")
        .map(|(i, line)| (i + 1, line.split("//").next().unwrap_or_default()))
}

/// Every module a file names through `crate::`, with the first line that names it.
fn imports(file: &str, source: &str, modules: &[&str]) -> BTreeMap<String, usize> {
    let mut found = BTreeMap::new();
    for (line, text) in code(source) {
        for (at, _) in text.match_indices("crate::") {
            let rest = &text[at + "crate::".len()..];
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            assert!(
                modules.contains(&name.as_str()),
                "{file}:{line}: `crate::{name}` is not a module; name the module the item lives in \
                 (one module per `use`), so that this test sees the edge"
            );
            found.entry(name).or_insert(line);
        }
    }
    found
}

#[test]
fn every_file_imports_only_from_floors_below_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let floor_of: BTreeMap<&str, usize> =
        FLOORS.iter().enumerate().flat_map(|(floor, files)| files.iter().map(move |f| (*f, floor))).collect();
    let mut files: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter_map(|name| name.strip_suffix(".rs").map(str::to_owned))
        .filter(|name| name != "lib")
        .collect();
    files.sort();
    let mut declared: Vec<&str> = floor_of.keys().copied().collect();
    declared.sort_unstable();
    assert_eq!(files, declared, "every file of src/ (but lib.rs) is on exactly one floor");

    let modules: Vec<&str> = files.iter().map(String::as_str).collect();
    let mut upward = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(src.join(format!("{file}.rs"))).unwrap();
        let floor = floor_of[file.as_str()];
        for (module, line) in imports(file, &source, &modules) {
            let to = floor_of[module.as_str()];
            if to >= floor {
                upward.push(format!("{file}.rs:{line} (floor {floor}) imports {module} (floor {to})"));
            }
        }
    }
    assert!(upward.is_empty(), "imports that do not point down:\n{}", upward.join("\n"));
}

/// Guards the check itself: an import of the same floor or above is found, with its line.
#[test]
fn the_floor_check_sees_an_upward_import() {
    let source = "//! doc naming crate::walk\nuse crate::text::Span;\nfn f() { crate::walk::args(); } // crate::json\n#[cfg(test)]\nuse crate::json;\n";
    let found = imports("raw", source, &["text", "walk", "json"]);
    assert_eq!(found, BTreeMap::from([("text".to_owned(), 2), ("walk".to_owned(), 3)]));
}
