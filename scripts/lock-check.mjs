#!/usr/bin/env node
// `.ci/run`'s lock check: compares package-lock.json as committed (argv[2], a copy taken
// before `npm install`) with the file npm left, and names every entry that differs and the
// command that fixes it. A lock that a fresh machine rewrites means CI depends on npm's
// cache state, so the check fails on any difference.
import { readFileSync } from "node:fs";

const [before, after = "package-lock.json"] = process.argv.slice(2);
if (!before) {
  console.error("usage: lock-check.mjs <lock as committed> [lock after npm install]");
  process.exit(2);
}
const read = (file) => JSON.parse(readFileSync(file, "utf8"));
const old = read(before);
const now = read(after);
const oldPackages = old.packages ?? {};
const newPackages = now.packages ?? {};
const lines = [];
for (const name of Object.keys(newPackages)) {
  if (!(name in oldPackages)) lines.push(`  added:   ${name || "(root)"} ${newPackages[name].version ?? ""}`);
  else if (JSON.stringify(oldPackages[name]) !== JSON.stringify(newPackages[name])) {
    const from = oldPackages[name].version;
    const to = newPackages[name].version;
    lines.push(`  changed: ${name || "(root)"}${from !== to ? ` ${from} -> ${to}` : " (fields)"}`);
  }
}
for (const name of Object.keys(oldPackages)) {
  if (!(name in newPackages)) lines.push(`  removed: ${name} ${oldPackages[name].version ?? ""}`);
}
const { packages: _a, ...oldTop } = old;
const { packages: _b, ...newTop } = now;
if (JSON.stringify(oldTop) !== JSON.stringify(newTop)) lines.push("  changed: the lock's top-level fields");
if (lines.length === 0 && readFileSync(before, "utf8") !== readFileSync(after, "utf8")) {
  lines.push("  changed: formatting only");
}
if (lines.length > 0) {
  console.error(`package-lock.json does not match what npm install makes on this machine (${lines.length} entr${lines.length === 1 ? "y" : "ies"}):`);
  console.error(lines.join("\n"));
  console.error("Fix: run 'npm install --cache \"$(mktemp -d)\"' on a fresh clone, check the entries above, and commit package-lock.json.");
  process.exit(1);
}
console.log("lock-check: package-lock.json unchanged by npm install");
