#!/usr/bin/env node
// The npm launcher (the esbuild and biome pattern): npm installs the one optional dependency whose
// `os` and `cpu` match this machine, holding the askuser binary; this runs it with every argument,
// stdin, stdout and stderr its own, and exits with its status (or its signal).
"use strict";
const { spawnSync } = require("node:child_process");

// `process.platform process.arch` → the package with that binary (also in xtask/src/npm.rs).
const PLATFORMS = {
  "linux x64": "@askuser/linux-x64",
  "linux arm64": "@askuser/linux-arm64",
  "darwin x64": "@askuser/darwin-x64",
  "darwin arm64": "@askuser/darwin-arm64",
};

const key = `${process.platform} ${process.arch}`;
const pkg = PLATFORMS[key];
if (!pkg) {
  console.error(`askuser: no prebuilt binary for ${key}; build it with Rust: cargo install askuser`);
  process.exit(3);
}
let binary;
try {
  binary = require.resolve(`${pkg}/bin/askuser`);
} catch {
  console.error(
    `askuser: the package ${pkg} (the binary for ${key}) is not installed; npm installs it as an ` +
      "optional dependency, so install without --omit=optional (or --no-optional)",
  );
  process.exit(3);
}
const run = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
if (run.error) {
  console.error(`askuser: cannot run ${binary}: ${run.error.message}`);
  process.exit(3);
}
if (run.signal) process.kill(process.pid, run.signal);
process.exit(run.status ?? 1);
