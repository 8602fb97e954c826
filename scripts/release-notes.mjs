#!/usr/bin/env node
// Prints CHANGELOG.md's section for one version (the release notes of its GitHub release), or fails
// when there is none: a release without notes is refused rather than published empty.
//   node scripts/release-notes.mjs 1.2.3 [CHANGELOG.md]
import { readFileSync } from "node:fs";

const [version, file = "CHANGELOG.md"] = process.argv.slice(2);
if (!version || !/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) {
  console.error("usage: release-notes.mjs <version, e.g. 1.2.3> [CHANGELOG.md]");
  process.exit(2);
}
const lines = readFileSync(file, "utf8").split("\n");
const heading = lines.findIndex((l) => new RegExp(`^## \\[${version.replace(/\./g, "\\.")}\\](\\s|$)`).test(l));
if (heading < 0) {
  console.error(`${file} has no section '## [${version}] - YYYY-MM-DD': add one (Keep a Changelog) before tagging v${version}.`);
  process.exit(1);
}
const next = lines.findIndex((l, i) => i > heading && (/^## /.test(l) || /^\[[^\]]+\]: /.test(l)));
const body = lines.slice(heading + 1, next < 0 ? undefined : next).join("\n").trim();
if (!body) {
  console.error(`${file}'s section for ${version} is empty: write what changed before tagging v${version}.`);
  process.exit(1);
}
process.stdout.write(body + "\n");
