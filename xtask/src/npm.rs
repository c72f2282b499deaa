//! `cargo xtask npm --binary PATH [--target TRIPLE] [--out DIR]`: the npm packages in the esbuild
//! and biome pattern, packed with `npm pack`: the launcher `askuser` (`npm/askuser`: a small
//! script, and one optional dependency per platform) and the platform package holding `PATH`
//! (`@askuser/linux-x64` and so on, chosen by npm through its `os` and `cpu`).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::workspace_root as root;

/// Target triple prefix → (npm `os`, npm `cpu`); the package is `@askuser/OS-CPU`.
const PLATFORMS: [(&str, &str, &str); 4] = [
    ("x86_64-unknown-linux", "linux", "x64"),
    ("aarch64-unknown-linux", "linux", "arm64"),
    ("x86_64-apple-darwin", "darwin", "x64"),
    ("aarch64-apple-darwin", "darwin", "arm64"),
];

pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let (mut binary, mut target, mut out) = (None, None, root().join("target/npm"));
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let value = args.next().cloned().ok_or_else(|| format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--binary" => binary = Some(PathBuf::from(value)),
            "--target" => target = Some(value),
            "--out" => out = PathBuf::from(value),
            other => {
                return Err(format!(
                    "unknown option {other:?}; usage: cargo xtask npm --binary PATH [--target T] [--out DIR]"
                ));
            }
        }
    }
    let binary = binary.ok_or("--binary PATH is required (cargo xtask dist builds one)")?;
    let target = match target {
        Some(target) => target,
        None => crate::dist::host_target()?,
    };
    for tarball in pack(&binary, &target, &crate::dist::version()?, &out)? {
        println!("{}", tarball.display());
    }
    Ok(())
}

/// Writes both packages under `out` and packs them; returns (platform tarball, launcher tarball).
pub(crate) fn pack(binary: &Path, target: &str, version: &str, out: &Path) -> Result<[PathBuf; 2], String> {
    let (_, os, cpu) = PLATFORMS
        .iter()
        .find(|(prefix, _, _)| target.starts_with(prefix))
        .ok_or_else(|| format!("no npm package for the target {target}"))?;
    let io = |what: &Path, e: std::io::Error| format!("{}: {e}", what.display());
    let _ = std::fs::remove_dir_all(out);
    let platform = out.join(format!("askuser-{os}-{cpu}"));
    let launcher = out.join("askuser");
    for dir in [platform.join("bin"), launcher.join("bin")] {
        std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
    }
    std::fs::copy(binary, platform.join("bin/askuser")).map_err(|e| io(binary, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let exe = platform.join("bin/askuser");
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).map_err(|e| io(&exe, e))?;
    }
    let license = r#""license": "MIT OR Apache-2.0""#;
    let platform_manifest = format!(
        "{{\n  \"name\": \"@askuser/{os}-{cpu}\",\n  \"version\": \"{version}\",\n  \"description\": \"The askuser binary for {os} {cpu} (installed by the askuser package)\",\n  {license},\n  \"os\": [\"{os}\"],\n  \"cpu\": [\"{cpu}\"],\n  \"files\": [\"bin/askuser\"],\n  \"preferUnplugged\": true\n}}\n"
    );
    let optional: Vec<String> =
        PLATFORMS.iter().map(|(_, os, cpu)| format!("    \"@askuser/{os}-{cpu}\": \"{version}\"")).collect();
    let template = std::fs::read_to_string(root().join("npm/askuser/package.json"))
        .map_err(|e| format!("npm/askuser/package.json: {e}"))?;
    let launcher_manifest = template.replace("0.0.0-set-by-xtask", version).replace(
        "\"optionalDependencies\": {}",
        &format!("\"optionalDependencies\": {{\n{}\n  }}", optional.join(",\n")),
    );
    for (path, text) in [
        (platform.join("package.json"), platform_manifest),
        (launcher.join("package.json"), launcher_manifest),
    ] {
        std::fs::write(&path, text).map_err(|e| io(&path, e))?;
    }
    let script = root().join("npm/askuser/bin/askuser.js");
    std::fs::copy(&script, launcher.join("bin/askuser.js")).map_err(|e| io(&script, e))?;
    for file in ["README.md", "LICENSE-MIT", "LICENSE-APACHE"] {
        for dir in [&platform, &launcher] {
            std::fs::copy(root().join(file), dir.join(file)).map_err(|e| io(&root().join(file), e))?;
        }
    }
    let mut tarballs = Vec::new();
    for dir in [&platform, &launcher] {
        let output = Command::new("npm")
            .args(["pack", "--silent", "--pack-destination"])
            .arg(out)
            .current_dir(dir)
            .output()
            .map_err(|e| format!("could not run npm pack: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "npm pack in {} failed: {}",
                dir.display(),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        let name =
            String::from_utf8_lossy(&output.stdout).trim().lines().last().unwrap_or_default().to_owned();
        tarballs.push(out.join(name));
    }
    Ok([tarballs[0].clone(), tarballs[1].clone()])
}
