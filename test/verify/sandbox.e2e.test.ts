/**
 * Issue #26: `verify-command` stays in the agent's sandbox. claude (against
 * the stub) answers once; then the check, a probe script from the
 * workspace, runs in bubblewrap with `network: model-only` and looks for
 * what it must not have: runner secrets in its environment and in every
 * /proc/<pid>/environ it can read (the model key, the GitHub token, a runner
 * variable never forwarded), a loopback port on the host the policy forbids
 * (directly and through the proxy), and host folders outside the workspace
 * to write into, the agent's own workspace among them (issue #32: the check
 * runs on a clean copy, never in the agent's workspace). Judged on the host:
 * the probe's evidence files, printed as a hex dump into the check's log (a
 * leaked secret in hex bytes is nothing the redactor looks for, so a leak
 * would show), the host server's connection count, and the host folders.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { makeWorkspace } from "../agents/helpers.js";
import { REPO_ROOT } from "../support/harness.js";
import { startStubModel, type StubModel } from "../support/stub-model.js";
import { runWithVerify } from "./helpers.js";

const tag = randomBytes(6).toString("hex");
const MODEL_KEY = `sk-ant-canary-model-${tag}`;
const GITHUB_TOKEN = `ghs_canaryGithubToken${tag}0123456789`;
const RUNNER_VAR = `canary-runner-${tag}`;
const RUNTIME_TOKEN = `canary-runtime-${tag}`;
/** The file the probe tries to write outside the workspace (named per run: a leftover of another run proves nothing). */
const PWNED = `pwned-by-verify-${tag}`;
/** Given to the agent on purpose (`env`): the probe must see this one, so its scan is known to work. */
const VISIBLE = `canary-visible-${tag}`;

/** Writes what it finds into evidence/ in the workspace; always exits 0 (the verdict is the host's). */
const PROBE = `#!/bin/bash
port="$1"; name="$2"; shift 2
mkdir -p evidence
env > evidence/env.txt
for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < "$f" 2>/dev/null; done > evidence/proc.txt
ls /proc | grep -c '^[0-9]' > evidence/proc-count.txt
node -e '
const s = require("net").connect(Number(process.argv[1]), "127.0.0.1");
s.setTimeout(3000);
s.on("connect", () => { console.log("direct: connected"); s.destroy(); });
s.on("error", (e) => console.log("direct: " + e.code));
s.on("timeout", () => { console.log("direct: timeout"); s.destroy(); });
' "$port" > evidence/net.txt
curl -s -o /dev/null -w 'proxied: %{http_code}\\n' --max-time 5 "http://127.0.0.1:$port/" >> evidence/net.txt 2>&1 || echo "proxied: failed $?" >> evidence/net.txt
for d in "$@"; do
  mkdir -p "$d" 2>/dev/null
  if echo pwned > "$d/$name" 2>/dev/null; then echo "wrote $d" >> evidence/write.txt; else echo "refused $d" >> evidence/write.txt; fi
done
echo inside > evidence/inside.txt
for f in evidence/*; do echo "=== $f"; od -An -v -tx1 < "$f"; done
echo probe done
`;

/** The evidence files from the hex dumps in the check's log. */
function evidenceFrom(log: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const part of log.split(/^=== evidence\//m).slice(1)) {
    const [name, ...dump] = part.split("\n");
    const hex = dump.join("").split("probe done")[0]!.replace(/[^0-9a-f]/g, "");
    files.set(name!.trim(), Buffer.from(hex, "hex").toString("utf8"));
  }
  return files;
}

let stub: StubModel;
let server: net.Server;
let connections = 0;
beforeAll(async () => {
  stub = await startStubModel([{ text: "Nothing to change." }]);
  server = net.createServer((sock) => {
    connections++;
    sock.end("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
});
afterAll(async () => {
  await stub?.close();
  await new Promise((resolve) => server?.close(resolve));
});

describe("verify-command in the sandbox", () => {
  it("sees no runner secret (env, /proc), reaches no forbidden loopback port, writes nothing outside the workspace", async () => {
    const ws = makeWorkspace({ "probe.sh": PROBE, "README.md": "# probe\n" });
    const port = (server.address() as net.AddressInfo).port;
    // Host folders: one the sandbox hides (under /tmp), one it shows read-only (in the repository).
    const hidden = mkdtempSync(path.join(os.tmpdir(), "verify-outside-"));
    const shown = path.join(REPO_ROOT, "test-output", `verify-outside-${tag}`);
    mkdirSync(shown, { recursive: true });
    onTestFinished(() => rmSync(shown, { recursive: true, force: true }));
    const r = await runWithVerify(
      ws,
      {
        agent: "claude",
        model: "claude-sonnet-4-5",
        "base-url": stub.url,
        secrets: `ANTHROPIC_API_KEY=${MODEL_KEY}`,
        env: `VISIBLE_TO_CHECK=${VISIBLE}`,
        prompt: "Look around.",
        network: "model-only",
        "verify-command": `bash probe.sh ${port} ${PWNED} ${hidden} ${shown} ${path.dirname(ws)} ${ws}`,
        "max-fix-rounds": "0",
      },
      { RUNNER_CANARY: RUNNER_VAR, ACTIONS_RUNTIME_TOKEN: RUNTIME_TOKEN, GITHUB_TOKEN },
      GITHUB_TOKEN,
    );
    expect(r.exitCode, r.log).toBe(0);
    expect(r.result.sandboxBackend).toBe("bwrap");
    expect(r.outputs.verified).toBe("passed");
    const log = readFileSync(path.join(r.resultsDir, "verify/verify-1.log"), "utf8");
    const files = evidenceFrom(log);
    const evidence = (f: string) => files.get(f) ?? "";

    // The scan works: the variable given to the agent is there, in env and in /proc.
    const env = evidence("env.txt");
    const proc = evidence("proc.txt");
    expect(env).toContain(`VISIBLE_TO_CHECK=${VISIBLE}`);
    expect(proc).toContain(`VISIBLE_TO_CHECK=${VISIBLE}`);
    // No runner secret in either: not the model key (the gateway holds it), not the token, not a runner variable.
    for (const secret of [MODEL_KEY, GITHUB_TOKEN, RUNNER_VAR, RUNTIME_TOKEN]) {
      expect(env).not.toContain(secret);
      expect(proc).not.toContain(secret);
    }
    expect(env).not.toMatch(/^(GITHUB_TOKEN|ACTIONS_RUNTIME_TOKEN|RUNNER_CANARY|INPUT_[A-Z_-]+)=/m);
    // Its own PID namespace: a handful of processes, not the host's.
    expect(Number(evidence("proc-count.txt").trim())).toBeLessThan(20);

    // The host's loopback port: refused inside, refused by the proxy, never reached.
    const netText = evidence("net.txt");
    expect(netText).not.toContain("direct: connected");
    expect(netText).not.toContain("proxied: 200");
    expect(connections).toBe(0);

    // Host folders untouched, the agent's workspace too (the check wrote in its own copy only).
    for (const dir of [hidden, shown, path.dirname(ws), ws]) expect(existsSync(path.join(dir, PWNED))).toBe(false);
    expect(readdirSync(hidden)).toEqual([]);
    expect(readdirSync(shown)).toEqual([]);
    expect(evidence("write.txt").trim().split("\n")).toEqual([hidden, shown, path.dirname(ws), ws].map((d) => `refused ${d}`));
    expect(evidence("inside.txt")).toBe("inside\n");
    expect(existsSync(path.join(ws, "evidence"))).toBe(false);

    // The check's log is in the results, and holds no secret either.
    expect(log).toContain("probe done");
    for (const secret of [MODEL_KEY, GITHUB_TOKEN, RUNNER_VAR, RUNTIME_TOKEN]) expect(r.log + log).not.toContain(secret);
  });
});
