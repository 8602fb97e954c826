/**
 * One check, before any test, of what the suite needs from this machine
 * (vitest.config.ts runs it as globalSetup; scripts/setup-check.mjs runs it
 * at the end of `npm run setup`). Without it a machine lacking bubblewrap or
 * Chromium shows scattered, unrelated-looking failures and silent skips; with
 * it the run stops at once with one message naming what is missing and the
 * set-up command. The tests then rely on these tools and fail loudly if one
 * breaks; only what a machine may lawfully lack (a Docker engine) is skipped,
 * with the reason (test/preflight-skips.ts prints them at the end).
 *
 * Tools are looked up on PATH, as the action finds them (only PATH: the
 * action's fallback folders must not hide a PATH the tests would not use).
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** The Chromium the preflight found on PATH (tests open transcripts in it). */
    chromium: string;
    /** GitHub's Markdown renderer (the posting corpus test renders with it). */
    cmarkGfm: string;
  }
}

export const SETUP_COMMAND = "npm run setup";

/** The Node the suite runs dist/ with: the `node` devDependency, as the runner's node24. */
const NODE_MAJOR = 24;

/** What the tests run, by the Debian/Ubuntu package that brings it (scripts/setup.sh installs the same). */
const TOOLS: { names: string[]; pkg: string }[] = [
  { names: ["bwrap"], pkg: "bubblewrap" },
  { names: ["socat"], pkg: "socat" },
  { names: ["chromium", "chromium-browser"], pkg: "chromium" },
  { names: ["git"], pkg: "git" },
  { names: ["curl"], pkg: "curl" },
  { names: ["ps"], pkg: "procps" },
  { names: ["cmark-gfm"], pkg: "cmark-gfm" },
];

export interface MachineCheck {
  /** One line per problem; empty when the machine is ready. */
  problems: string[];
  /** Full paths of the tools found, by package. */
  found: Record<string, string>;
}

/** The first executable file called `name` in the PATH folders. */
export function onPath(name: string, searchPath: string): string | undefined {
  for (const dir of searchPath.split(":").filter((d) => path.isAbsolute(d))) {
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      // next folder
    }
  }
  return undefined;
}

function nodeVersion(node: string): Promise<string | undefined> {
  return new Promise((resolve) =>
    execFile(node, ["-p", "process.versions.node"], { timeout: 10_000 }, (err, stdout) => resolve(err ? undefined : stdout.trim())),
  );
}

async function checkNode(searchPath: string): Promise<string | undefined> {
  const node = onPath("node", searchPath);
  const why = `the tests run dist/ with Node ${NODE_MAJOR} (the \`node\` devDependency, which \`npm test\` puts first on PATH from node_modules/.bin)`;
  if (!node) return `node: not on PATH; ${why}`;
  const version = await nodeVersion(node);
  if (version?.split(".")[0] === String(NODE_MAJOR)) return undefined;
  return `node: the first on PATH is ${version ? `v${version}` : "not runnable"} (${node}); ${why}`;
}

export async function checkTestMachine(searchPath: string): Promise<MachineCheck> {
  const found: Record<string, string> = {};
  const missing: string[] = [];
  for (const tool of TOOLS) {
    const file = tool.names.map((n) => onPath(n, searchPath)).find(Boolean);
    if (file) found[tool.pkg] = file;
    else missing.push(tool.pkg === tool.names[0] ? tool.pkg : `${tool.pkg} (${tool.names.join(" or ")})`);
  }
  const problems = missing.length ? [`not on PATH: ${missing.join(", ")}`] : [];
  const [bwrap, node] = await Promise.all([found.bubblewrap ? probeNamespaces(found.bubblewrap, searchPath) : undefined, checkNode(searchPath)]);
  if (bwrap && !bwrap.ok) problems.push(bwrap.reason);
  if (node) problems.push(node);
  return { problems, found };
}

/**
 * The bwrap backend's own probe: can this machine create the namespaces a
 * sandbox needs? Loaded lazily: source that does not load (mid-edit) must
 * fail the tests that use it with its own error, not stop every test here.
 */
async function probeNamespaces(bwrapPath: string, searchPath: string): Promise<{ ok: true } | { ok: false; reason: string }> {
  let createBwrapBackend: typeof import("../src/sandbox/bwrap.js").createBwrapBackend;
  try {
    ({ createBwrapBackend } = await import("../src/sandbox/bwrap.js"));
  } catch (e) {
    process.stderr.write(`preflight: the bubblewrap namespace probe was not run: src/sandbox/bwrap.ts does not load (${e instanceof Error ? e.message : String(e)}).\n`);
    return { ok: true };
  }
  return createBwrapBackend({ host: { path: searchPath }, bwrapPath }).check();
}

export function preflightMessage(problems: string[], fix = `Run \`${SETUP_COMMAND}\` (system packages, npm install, then this check again), then \`npm test\`.`): string {
  return ["This machine cannot run the test suite yet (test/preflight.ts):", ...problems.map((p) => `  - ${p}`), fix].join("\n");
}

/** vitest globalSetup: stop the run before any test when the machine is not ready. */
export default async function preflight(project: TestProject): Promise<void> {
  const { problems, found } = await checkTestMachine(process.env.PATH ?? "");
  if (problems.length) {
    process.stderr.write(`\n${preflightMessage(problems)}\n\n`);
    // Not a thrown error: vitest would add a stack trace and "no test files found".
    process.exit(1);
  }
  project.provide("chromium", found.chromium!);
  project.provide("cmarkGfm", found["cmark-gfm"]!);
}
