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
        "[mcp_servers.ask-me]\ncommand = \"askuser\"\nargs = [\"mcp\", \"--timeout\", \"600\"]\ntool_timeout_sec = 660\n"
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
    let expected = data("vscode.expected.json").replace(r#""--timeout", "600""#, r#""--timeout", "1200""#);
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
        (&["cursor", "--timeout", "0"], "--timeout takes whole seconds"),
        (&["cursor", "--name", "a b"], "--name takes letters"),
    ] {
        let output = home.install(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(stderr(&output).contains(says), "{args:?}: {}", stderr(&output));
    }
}
