//! `askuser mcp install HOST` against each host's file in its documented shape
//! (`tests/data/hosts`): merged, byte for byte as expected, backed up, idempotent, undoable.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const HOSTS: [(&str, &str); 7] = [
    ("claude-code", "project/.mcp.json"),
    ("claude-desktop", ".config/Claude/claude_desktop_config.json"),
    ("vscode", "project/.vscode/mcp.json"),
    ("vscode-user", ".config/Code/User/mcp.json"),
    ("cursor", ".cursor/mcp.json"),
    ("windsurf", ".codeium/windsurf/mcp_config.json"),
    ("codex", ".codex/config.toml"),
];

fn data(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hosts").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A home directory with a `project` directory to run in.
struct Home(PathBuf);

impl Home {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("askuser-install-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("project")).unwrap();
        Self(dir)
    }

    fn install(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_askuser"))
            .args(["mcp", "install"])
            .args(args)
            .current_dir(self.0.join("project"))
            .env("HOME", &self.0)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CODEX_HOME")
            .output()
            .unwrap()
    }

    /// The other files beside `file` (backups), by name.
    fn beside(file: &Path) -> Vec<String> {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let mut found: Vec<String> = std::fs::read_dir(file.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| *n != name)
            .collect();
        found.sort();
        found
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[cfg(unix)]
#[test]
fn merges_into_each_hosts_file_backs_up_and_undoes() {
    for (host, place) in HOSTS {
        let ext = if host == "codex" { "toml" } else { "json" };
        let original = data(&format!("{host}.{ext}"));
        let expected = data(&format!("{host}.expected.{ext}"));
        let home = Home::new(host);
        let file = home.0.join(place);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, &original).unwrap();

        // --print shows the merged file and writes nothing.
        let printed = home.install(&[host, "--command", "askuser", "--print"]);
        assert_eq!(printed.status.code(), Some(0), "{host}: {}", stderr(&printed));
        assert_eq!(String::from_utf8_lossy(&printed.stdout), format!("{}\n", expected.trim_end()), "{host}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), original, "{host}: --print wrote");
        assert!(Home::beside(&file).is_empty(), "{host}");

        let first = home.install(&[host, "--command", "askuser"]);
        assert_eq!(first.status.code(), Some(0), "{host}: {}", stderr(&first));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), expected, "{host}");
        let backups = Home::beside(&file);
        assert_eq!(backups.len(), 1, "{host}: {backups:?}");
        assert_eq!(std::fs::read_to_string(file.with_file_name(&backups[0])).unwrap(), original, "{host}");
        let message = stderr(&first);
        let undo = message.lines().find_map(|l| l.strip_prefix("To undo: ")).expect("an undo command");
        assert!(undo.starts_with("mv "), "{host}: {undo}");

        // Again: nothing changes, no second backup.
        let again = home.install(&[host, "--command", "askuser"]);
        assert_eq!(again.status.code(), Some(0));
        assert!(stderr(&again).contains("nothing changed"), "{host}: {}", stderr(&again));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), expected, "{host}");
        assert_eq!(Home::beside(&file), backups, "{host}");

        // The printed undo restores the file as it was.
        let status = Command::new("sh").args(["-c", undo]).status().unwrap();
        assert!(status.success());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), original, "{host}");
        assert!(Home::beside(&file).is_empty(), "{host}");
    }
}

#[test]
fn creates_a_missing_file_and_says_to_remove_it() {
    let home = Home::new("missing");
    let output = home.install(&["cursor", "--command", "/opt/askuser/bin/askuser", "--timeout", "900"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let file = home.0.join(".cursor/mcp.json");
    let written: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        written,
        serde_json::json!({"mcpServers": {"askuser": {
            "command": "/opt/askuser/bin/askuser", "args": ["mcp", "--timeout", "900"]}}})
    );
    assert!(stderr(&output).contains(&format!("To undo: rm {}", file.display())), "{}", stderr(&output));
    let codex = home.install(&["codex", "--command", "askuser", "--name", "ask-me"]);
    assert_eq!(codex.status.code(), Some(0), "{}", stderr(&codex));
    assert_eq!(
        std::fs::read_to_string(home.0.join(".codex/config.toml")).unwrap(),
        "[mcp_servers.ask-me]\ncommand = \"askuser\"\nargs = [\"mcp\", \"--timeout\", \"600\", \"--background\"]\ntool_timeout_sec = 660\n"
    );
}

#[test]
fn a_different_entry_of_the_same_name_is_replaced_and_the_rest_kept() {
    let home = Home::new("replace");
    let file = home.0.join("project/.vscode/mcp.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, data("vscode.expected.json")).unwrap();
    let output = home.install(&["vscode", "--command", "askuser", "--timeout", "1200"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).contains("replaced the entry askuser"), "{}", stderr(&output));
    let expected = data("vscode.expected.json").replace(r#""--timeout", "290""#, r#""--timeout", "1200""#);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), expected);
}

#[test]
fn a_broken_file_is_left_alone_naming_where() {
    let home = Home::new("broken");
    let file = home.0.join(".cursor/mcp.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\" \"args\": []}\n  }\n}\n")
        .unwrap();
    let output = home.install(&["cursor", "--command", "askuser"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("not valid JSON at line 3, column 26: expected , or }"),
        "{}",
        stderr(&output)
    );
    assert!(Home::beside(&file).is_empty());
    for (args, says) in [
        (&["mcp-host"][..], "unknown host \"mcp-host\"; one of claude-code, claude-desktop"),
        (&[][..], "which host?"),
        (&["cursor", "--timeout", "0"], "--timeout must be a duration above 0"),
        (&["cursor", "--timeout", "400d"], "--timeout takes at most a year"),
        (&["cursor", "--token-file", "t"], "--token-file goes with --server URL"),
        (&["cursor", "--server", "127.0.0.1:8765"], "--server takes a URL starting with http://"),
        (&["cursor", "--name", "a b"], "--name takes letters"),
    ] {
        let output = home.install(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(stderr(&output).contains(says), "{args:?}: {}", stderr(&output));
    }
}

#[test]
fn a_host_without_forms_warns_and_gets_the_answer_server() {
    let home = Home::new("no-forms");
    let file = home.0.join(".config/Claude/claude_desktop_config.json");
    let args = |output: &Output| -> serde_json::Value {
        assert_eq!(output.status.code(), Some(0), "{}", stderr(output));
        let written: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        written["mcpServers"]["askuser"]["args"].clone()
    };
    // Without a server, every question would be declined: said at install time, with what to run.
    let plain = home.install(&["claude-desktop", "--command", "askuser"]);
    assert_eq!(args(&plain), serde_json::json!(["mcp", "--timeout", "50", "--background"]));
    assert!(stderr(&plain).contains("warning: Claude Desktop shows no forms"), "{}", stderr(&plain));
    assert!(
        stderr(&plain).contains("askuser mcp install claude-desktop --server http://127.0.0.1:8765"),
        "{}",
        stderr(&plain)
    );
    for given in
        [&["--fallback", "server", "http://127.0.0.1:8765"][..], &["--server", "http://127.0.0.1:8765"]]
    {
        let output = home.install(&[&["claude-desktop", "--command", "askuser"][..], given].concat());
        assert_eq!(
            args(&output),
            serde_json::json!([
                "mcp",
                "--timeout",
                "50",
                "--background",
                "--fallback",
                "server http://127.0.0.1:8765"
            ]),
            "{given:?}"
        );
        assert!(!stderr(&output).contains("warning"), "{given:?}: {}", stderr(&output));
    }
    // A host with forms shows them and the server at once.
    let cursor = home.install(&[
        "cursor",
        "--command",
        "askuser",
        "--server",
        "http://127.0.0.1:8765",
        "--token-file",
        "/t",
    ]);
    assert_eq!(cursor.status.code(), Some(0), "{}", stderr(&cursor));
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(home.0.join(".cursor/mcp.json")).unwrap()).unwrap();
    assert_eq!(
        written["mcpServers"]["askuser"]["args"],
        serde_json::json!([
            "mcp",
            "--timeout",
            "290",
            "--also",
            "server http://127.0.0.1:8765",
            "--token-file",
            "/t"
        ])
    );
    // A timeout past the host's cut is written as asked, and said.
    let long = home.install(&["cursor", "--command", "askuser", "--timeout", "10m"]);
    assert!(
        stderr(&long).contains("cuts a tool call at about 300 s, before --timeout 600 s"),
        "{}",
        stderr(&long)
    );
    let claude = home.install(&["claude-code", "--command", "askuser"]);
    assert!(stderr(&claude).contains("pending until you approve them"), "{}", stderr(&claude));
}

#[test]
fn check_says_whether_the_host_can_ask() {
    let home = Home::new("check");
    let askuser = env!("CARGO_BIN_EXE_askuser");
    let check = |args: &[&str]| {
        let output = home.install(&[&["--check"][..], args].concat());
        (output.status.code(), String::from_utf8_lossy(&output.stdout).into_owned())
    };
    let (code, said) = check(&["claude-desktop"]);
    assert_eq!(code, Some(1));
    assert!(said.contains("does not exist"), "{said}");

    assert_eq!(home.install(&["claude-desktop", "--command", askuser]).status.code(), Some(0));
    let (code, said) = check(&["claude-desktop"]);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("every question is declined at once"), "{said}");
    assert!(said.contains("verdict: the host cannot ask the person"), "{said}");

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    assert_eq!(
        home.install(&["claude-desktop", "--command", askuser, "--server", &url]).status.code(),
        Some(0)
    );
    let (code, said) = check(&["claude-desktop"]);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains(&format!("answer server {url}: answering now")), "{said}");
    drop(listener);
    let (code, said) = check(&["claude-desktop"]);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("nothing answers there now"), "{said}");

    assert_eq!(home.install(&["cursor", "--command", "/nowhere/askuser"]).status.code(), Some(0));
    let (code, said) = check(&["cursor"]);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("\"/nowhere/askuser\" is not a program"), "{said}");
    assert_eq!(home.install(&["cursor", "--command", askuser]).status.code(), Some(0));
    let (code, said) = check(&["cursor"]);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("the host shows the questions as a form"), "{said}");
}

/// A directory someone else prepared (a cloned repository) must not redirect the write: a link
/// at the host's file, at the backup's name or at the temporary's.
#[cfg(unix)]
#[test]
fn links_in_a_prepared_directory_are_never_followed() {
    use std::os::unix::fs::{PermissionsExt as _, symlink};
    let home = Home::new("links");
    let project = home.0.join("project");
    let private = home.0.join("private.txt");
    std::fs::write(&private, "mine\n").unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();

    // The host's file is a link: refused, naming --file; the private file is untouched.
    symlink(&private, project.join(".mcp.json")).unwrap();
    let output = home.install(&["claude-code", "--command", "askuser"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("is a symbolic link"), "{}", stderr(&output));
    assert!(stderr(&output).contains("--file"), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(&private).unwrap(), "mine\n");
    std::fs::remove_file(project.join(".mcp.json")).unwrap();

    // A folder on the way is a link (`.vscode` pointing at another host's folder): refused too.
    let elsewhere = home.0.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    symlink(&elsewhere, project.join(".vscode")).unwrap();
    let output = home.install(&["vscode", "--command", "askuser"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(std::fs::read_dir(&elsewhere).unwrap().next().is_none(), "written through the link");

    // Dangling links at every backup name of the next seconds: none is followed.
    let file = project.join(".mcp.json");
    std::fs::write(&file, "{\n}\n").unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    for secs in now..now + 30 {
        symlink(home.0.join(format!("made-{secs}")), project.join(format!(".mcp.json.askuser-bak-{secs}")))
            .unwrap();
    }
    let output = home.install(&["claude-code", "--command", "askuser"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let made: Vec<_> = std::fs::read_dir(&home.0)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.starts_with("made-"))
        .collect();
    assert!(made.is_empty(), "the backup was written through a link: {made:?}");
    assert_eq!(std::fs::read_to_string(&private).unwrap(), "mine\n");
    assert_eq!(std::fs::metadata(&private).unwrap().permissions().mode() & 0o777, 0o600);

    // Named explicitly, a link is followed: the file it points to is written, keeping its mode.
    std::fs::remove_file(&file).unwrap();
    symlink(&private, &file).unwrap();
    std::fs::write(&private, "{}\n").unwrap();
    let output = home.install(&["claude-code", "--command", "askuser", "--file", ".mcp.json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(std::fs::read_to_string(&private).unwrap().contains("\"askuser\""));
    assert_eq!(std::fs::metadata(&private).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(std::fs::symlink_metadata(&file).unwrap().file_type().is_symlink(), "the link itself is kept");
}
