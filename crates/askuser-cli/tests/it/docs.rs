//! The shell commands of README.md and docs/*.md run from a clone: each names a real binary,
//! subcommand, flag, package, bench and file of this repository (nothing outside it, nothing
//! unpublished to install), and the quick ones are run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// One command line of a doc, and where it is.
struct Line {
    place: String,
    words: Vec<String>,
    /// The file after `<`, if any.
    stdin: Option<String>,
}

/// The command lines of the fenced blocks (untagged or `sh`) of README.md and docs/*.md: lines
/// starting with `cargo`, `askuser` or a built `askuser`, or running a script of the repository.
fn command_lines() -> Vec<Line> {
    let root = root();
    let mut docs = vec![root.join("README.md")];
    let mut more: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    more.sort();
    docs.extend(more);
    let mut lines = Vec::new();
    for doc in docs {
        let text = std::fs::read_to_string(&doc).unwrap();
        let name = doc.strip_prefix(&root).unwrap().display().to_string();
        let mut shell = None;
        for (number, line) in (1..).zip(text.lines()) {
            if let Some(tag) = line.strip_prefix("```") {
                shell = if shell.is_some() { None } else { Some(matches!(tag.trim(), "" | "sh" | "bash")) };
                continue;
            }
            if shell != Some(true) {
                continue;
            }
            // `cd DIR && …` runs in DIR: the rest is checked from there by its own words.
            for part in line.split("&&") {
                let mut words = split(part);
                while words.first().is_some_and(|w| w == "time" || is_assignment(w)) {
                    words.remove(0);
                }
                let stdin = words.iter().position(|w| w == "<").map(|at| {
                    let file = words.get(at + 1).cloned().unwrap_or_default();
                    words.truncate(at);
                    file
                });
                if let Some(at) = words.iter().position(|w| w == ">") {
                    words.truncate(at);
                }
                let Some(first) = words.first() else { continue };
                let runs_askuser = first == "askuser" || first.starts_with("target/");
                let script = words
                    .iter()
                    .take(2)
                    .any(|w| Path::new(w).extension().is_some_and(|e| e == "py" || e == "sh"));
                if first == "cargo" || runs_askuser || script {
                    lines.push(Line { place: format!("{name}:{number}"), words, stdin });
                }
            }
        }
    }
    lines
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=')
        .is_some_and(|(name, _)| !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
}

/// Shell words of `line`, up to an unquoted comment: quotes removed, `$(…)` kept as one word.
fn split(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut depth = 0;
    let mut started = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') if depth == 0 => {
                quote = Some(c);
                started = true;
            }
            (None, '#') if depth == 0 && !started => break,
            (None, ' ' | '\t') if depth == 0 => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => {
                depth += usize::from(c == '(');
                depth = depth.saturating_sub(usize::from(c == ')'));
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// The workspace's packages: name → directory.
fn packages() -> Vec<(String, PathBuf)> {
    let root = root();
    let mut found = Vec::new();
    for group in ["crates", "examples"] {
        for entry in std::fs::read_dir(root.join(group)).unwrap() {
            let dir = entry.unwrap().path();
            let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else { continue };
            let name = manifest
                .lines()
                .find_map(|l| l.strip_prefix("name = \"").and_then(|n| n.strip_suffix('"')))
                .unwrap()
                .to_owned();
            found.push((name, dir));
        }
    }
    found
}

/// The value after `flag` in `words`.
fn after<'a>(words: &'a [String], flag: &str) -> Option<&'a str> {
    words.iter().position(|w| w == flag).and_then(|at| words.get(at + 1)).map(String::as_str)
}

fn askuser(args: &[&str], stdin: Option<&Path>) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_askuser"));
    command.args(args).current_dir(root()).env("NO_BELL", "1");
    command.stdin(match stdin {
        Some(path) => Stdio::from(std::fs::File::open(path).unwrap()),
        None => Stdio::null(),
    });
    command.output().unwrap()
}

/// Checks `askuser ARGS` as written at `place`: the subcommand exists, every flag is one its
/// `--help` lists, and the quick commands run (`ask` and `demo` answered `--unattended`).
fn check_askuser(place: &str, args: &[String], stdin: Option<&str>, problems: &mut Vec<String>) {
    // A synopsis (`askuser ask [FILE|-] [--timeout SECS]`) names its flags in brackets.
    let args: Vec<String> = args.iter().map(|a| a.trim_matches(['[', ']']).to_owned()).collect();
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let Some(&sub) = words.first() else { return };
    let help_args: Vec<&str> = match sub {
        "ask" if words.contains(&"--server") => vec!["ask", "--server", "http://127.0.0.1:1", "--help"],
        "mcp" if words.get(1) == Some(&"install") => vec!["mcp", "install", "--help"],
        "hook" if words.get(1) == Some(&"install") => vec!["hook", "install", "--help"],
        _ => vec![sub, "--help"],
    };
    let help = askuser(&help_args, None);
    if help.status.code() != Some(0) {
        problems.push(format!("{place}: `askuser {sub}` is no subcommand"));
        return;
    }
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    for flag in words.iter().filter(|w| w.starts_with("--")) {
        let flag = flag.split('=').next().unwrap_or(flag);
        if flag != "--help" && !help.contains(flag) {
            problems.push(format!("{place}: `askuser {sub}` has no {flag}"));
        }
    }
    let root = root();
    let stdin = stdin.map(|file| root.join(file)).filter(|path| !path.starts_with("/tmp"));
    let quick = matches!(sub, "schema" | "check" | "demo") || (sub == "ask" && !words.contains(&"--server"));
    if !quick || words.iter().any(|w| w.contains('|') || w.contains('…')) {
        return;
    }
    let mut run = words.clone();
    if matches!(sub, "ask" | "demo") {
        run.push("--unattended");
    }
    let output = askuser(&run, stdin.as_deref());
    // `ask` may decline (a secret without a terminal): exit 1; a usage error or invalid call is 2.
    let allowed: &[i32] = if sub == "ask" { &[0, 1] } else { &[0] };
    if !output.status.code().is_some_and(|c| allowed.contains(&c)) {
        problems.push(format!(
            "{place}: `askuser {}` exited {:?}: {}",
            run.join(" "),
            output.status.code(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
}

/// Guards the docs against commands that do not run from a clone: a file, package, bench,
/// example, subcommand or flag that does not exist, a path outside the repository, a `cargo
/// install` of a crate that is not published.
#[test]
fn every_command_in_the_docs_runs_from_a_clone() {
    let root = root();
    let packages = packages();
    let lines = command_lines();
    assert!(lines.len() > 40, "the docs' commands were not found: {}", lines.len());
    let mut problems = Vec::new();
    let mut ran = 0;
    for Line { place, words, stdin } in &lines {
        let mut cwd = root.clone();
        if place.starts_with("docs/conformance.md") && words.iter().any(|w| w == "fuzz") {
            cwd = root.join("fuzz");
        }
        for word in words.iter().chain(stdin) {
            if word.starts_with("../") {
                problems.push(format!("{place}: {word} is outside the repository"));
            }
            let repo_path = ["examples/", "crates/", "docs/", "schema/", "xtask/", "fuzz/", "corpus/"]
                .iter()
                .any(|dir| word.starts_with(dir));
            if repo_path && !word.contains('…') && !cwd.join(word.split(')').next().unwrap_or(word)).exists()
            {
                problems.push(format!("{place}: {word} does not exist"));
            }
        }
        let package = after(words, "-p").map(|name| packages.iter().find(|(n, _)| n == name));
        if package == Some(None) {
            problems.push(format!("{place}: no package {:?}", after(words, "-p")));
        }
        let dir = package.flatten().map(|(_, dir)| dir);
        for (flag, folder) in [("--bench", "benches"), ("--example", "examples")] {
            // A target of one file, or of a directory with its `main.rs`.
            if let (Some(name), Some(dir)) = (after(words, flag), dir)
                && !dir.join(folder).join(format!("{name}.rs")).is_file()
                && !dir.join(folder).join(name).join("main.rs").is_file()
            {
                problems.push(format!("{place}: {} has no {flag} {name}", dir.display()));
            }
        }
        let first = words[0].as_str();
        match (first, words.get(1).map(String::as_str)) {
            ("cargo", Some("install")) => {
                let published_tool = words.iter().any(|w| w == "cargo-fuzz");
                if !published_tool && after(words, "--path").is_none() {
                    problems.push(format!("{place}: `cargo install` of an unpublished crate: use --path"));
                }
            }
            ("cargo", Some("xtask")) => {
                let task = words.get(2).map_or("", String::as_str);
                let main = std::fs::read_to_string(root.join("xtask/src/main.rs")).unwrap();
                if !main.contains(&format!("Some(\"{task}\")")) {
                    problems.push(format!("{place}: no `cargo xtask {task}`"));
                }
            }
            ("cargo", Some("fuzz")) => {
                let target = words.get(3).map_or("", String::as_str);
                if !cwd.join("fuzz_targets").join(format!("{target}.rs")).is_file() {
                    problems.push(format!("{place}: no fuzz target {target}"));
                }
            }
            // An example's arguments are its own (its target was checked above).
            ("cargo", Some("run")) if after(words, "--example").is_some() => {}
            ("cargo", Some("run")) => {
                if after(words, "--bin") != Some("askuser") {
                    problems.push(format!("{place}: `cargo run` of another binary"));
                }
                if let Some(at) = words.iter().position(|w| w == "--") {
                    check_askuser(place, &words[at + 1..], stdin.as_deref(), &mut problems);
                    ran += 1;
                }
            }
            ("cargo", _) => {}
            (first, _) if first == "askuser" || first.starts_with("target/") => {
                check_askuser(place, &words[1..], stdin.as_deref(), &mut problems);
                ran += 1;
            }
            _ => {}
        }
    }
    assert!(ran > 20, "askuser commands checked: {ran}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_shell_words_are_read_as_a_shell_reads_them() {
    assert_eq!(split(r#"a 'b c' "d" $(x y) e   # f"#), ["a", "b c", "d", "$(x y)", "e"]);
    assert_eq!(split("cargo run -- ask   # a#b"), ["cargo", "run", "--", "ask"]);
    assert!(is_assignment("ASKUSER_ORACLE_PY=$(x)") && !is_assignment("--flag=1"));
}
