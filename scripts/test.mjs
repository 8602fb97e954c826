// `npm test`: the build, then the test suite with the type check and the layer rules beside it.
// The build comes first because the suite runs what it writes (dist/). The two checks need no test and
// no test needs them: run before the suite, they held one of the two cores idle for ~15 s; beside it, the
// suite's first minute shares that core. A failed check fails the run and its output is printed after the
// suite's, so one run shows everything that is wrong. Arguments go to vitest (`npm test -- test/unit`).
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const bin = (name) => path.join(root, "node_modules", ".bin", name);
const children = new Set();
// A signal to this process (Ctrl-C, a CI timeout) reaches the suite and the checks too.
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => {
  for (const child of children) child.kill(signal);
  process.exit(130);
});

/** Runs a command from the repository's root; with `capture`, its output is kept and handed back instead of shown. */
function run(command, args, { capture = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: capture ? ["ignore", "pipe", "pipe"] : "inherit" });
    children.add(child);
    let output = "";
    if (capture) {
      child.stdout.setEncoding("utf8").on("data", (d) => (output += d));
      child.stderr.setEncoding("utf8").on("data", (d) => (output += d));
    }
    child.on("error", (e) => resolve({ code: 127, output: `${command}: ${e.message}\n` }));
    child.on("close", (code, signal) => {
      children.delete(child);
      resolve({ code: code ?? (signal ? 1 : 0), output });
    });
  });
}

const build = await run(process.execPath, ["scripts/build.mjs"]);
if (build.code !== 0) process.exit(build.code);

const checks = [
  ["type check (tsc --noEmit)", bin("tsc"), ["--noEmit"]],
  ["layer rules (npm run layers)", "npm", ["run", "--silent", "layers"]],
].map(async ([name, command, args]) => ({ name, ...(await run(command, args, { capture: true })) }));
const suite = await run(bin("vitest"), ["run", ...process.argv.slice(2)]);
const failed = (await Promise.all(checks)).filter((c) => c.code !== 0);
for (const c of failed) process.stderr.write(`\n✗ ${c.name} failed (exit ${c.code}):\n${c.output}\n`);
if (failed.length) process.stderr.write(`npm test: ${failed.map((c) => c.name).join(" and ")} failed.\n`);
process.exit(suite.code !== 0 ? suite.code : failed.length ? 1 : 0);
