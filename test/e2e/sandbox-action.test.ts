/**
 * Issue #4 acceptance through the action itself: an adversarial `command`
 * agent inside the real bubblewrap sandbox tries to read runner secrets,
 * write outside the workspace, reach the network and outlive the run.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attackReport } from "../support/attack-report.js";
import { ACTION_ROOT, runActionSteps } from "../support/harness.js";

function makeRepo(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "sbx-ws-"));
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir });
  git("init", "-q", "-b", "main");
  writeFileSync(path.join(dir, "README.md"), "hi\n");
  git("add", "-A");
  git("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "init");
  // What actions/checkout leaves behind with persist-credentials: true.
  git("config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic Z2hzX3BsYW50ZWRDaGVja291dFRva2Vu");
  return dir;
}

let server: http.Server;
let port = 0;
beforeAll(async () => {
  server = http.createServer((_req, res) => res.end("reached-host-service"));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** Runs the adversary and returns its `KEY=value` report lines. */
async function adversary(network: string, extraInputs: Record<string, string> = {}) {
  const ws = makeRepo();
  const runnerTemp = mkdtempSync(path.join(os.tmpdir(), "sbx-runner-"));
  writeFileSync(path.join(runnerTemp, "planted-token"), "ghs_plantedRunnerTempToken0123456789");
  const hostHomeProbe = path.join(os.homedir(), `.agent-runner-probe-${process.pid}`);
  const hostTmpProbe = path.join(os.tmpdir(), `agent-runner-probe-${process.pid}`);
  const actionDirProbe = path.join(ACTION_ROOT, "dist", `probe-${process.pid}`);
  const marker = `sbx-sleeper-${process.pid}-${Date.now()}`;
  const script = path.join(mkdtempSync(path.join(os.tmpdir(), "sbx-agent-")), "agent.sh");
  writeFileSync(
    script,
    `#!/bin/bash
report() { echo "REPORT $1=$2"; }
env_dump=$(env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n')
report env_has_github_token $(grep -c 'ghs_runnerJobToken' <<<"$env_dump")
report env_has_runtime_token $(grep -c 'runtime-token-secret' <<<"$env_dump")
report env_has_model_key $(grep -c 'sk-real-model-key' <<<"$env_dump")
report env_has_forwarded $(grep -c 'FORWARDED_OK=yes' <<<"$env_dump")
report runner_temp_token $(cat ${runnerTemp}/planted-token 2>/dev/null | grep -c ghs_planted)
report git_config_token $(grep -ci 'authorization\\|Z2hzX3BsYW50ZWRDaGVja291dFRva2Vu' .git/config)
touch ${hostHomeProbe} 2>/dev/null && report wrote_host_home 1 || report wrote_host_home 0
touch ${hostTmpProbe} 2>/dev/null && report wrote_host_tmp 1 || report wrote_host_tmp 0
touch ${actionDirProbe} 2>/dev/null && report wrote_action_dir 1 || report wrote_action_dir 0
echo ok > in-workspace.txt && report wrote_workspace 1
sudo -n true 2>/dev/null && report sudo 1 || report sudo 0
curl -s --noproxy '*' -m 3 http://127.0.0.1:${port}/ | grep -q reached && report direct_loopback 1 || report direct_loopback 0
curl -s -m 3 http://127.0.0.1:${port}/ | grep -q reached && report via_policy 1 || report via_policy 0
curl -sf -m 3 http://blocked.example.com/ | grep -q . && report other_domain 1 || report other_domain 0
setsid bash -c 'exec -a ${marker} sleep 1000' </dev/null >/dev/null 2>&1 &
report done 1
`,
  );
  chmodSync(script, 0o755);
  const { main } = await runActionSteps({
    workspace: ws,
    runnerTemp,
    inputs: {
      agent: "command",
      "agent-command": script,
      prompt: "attack",
      sandbox: "bwrap",
      network,
      secrets: "MODEL_KEY_NOT_FORWARDED=sk-real-model-key",
      "forward-env": "FORWARDED",
      ...extraInputs,
    },
    env: { GITHUB_TOKEN: "ghs_runnerJobToken0123456789abcdef", ACTIONS_RUNTIME_TOKEN: "runtime-token-secret", FORWARDED: "FORWARDED_OK=yes" },
  });
  const report = attackReport(main);
  const survivors = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" }).split("\n").filter((l) => l.includes(marker));
  const hostChanged = [hostHomeProbe, hostTmpProbe, actionDirProbe].filter((p) => existsSync(p));
  return { main, report, survivors, hostChanged };
}

describe("bubblewrap sandbox, through the action", () => {
  it("keeps runner secrets, the host filesystem and other ports out of reach (model-only)", async () => {
    const { main, report, survivors, hostChanged } = await adversary("model-only");
    expect(main.outputs.conclusion).toBe("success");
    expect(report).toMatchObject({
      done: "1",
      env_has_github_token: "0",
      env_has_runtime_token: "0",
      runner_temp_token: "0",
      git_config_token: "0",
      wrote_host_home: "0",
      wrote_host_tmp: "0",
      wrote_action_dir: "0",
      wrote_workspace: "1",
      sudo: "0",
      direct_loopback: "0",
      via_policy: "0",
      other_domain: "0",
    });
    expect(Number(report.env_has_forwarded)).toBeGreaterThan(0);
    // Declared secrets that are not model keys are forwarded (a command agent has none), but never the runner's tokens.
    expect(Number(report.env_has_model_key)).toBeGreaterThan(0);
    expect(hostChanged).toEqual([]);
    expect(survivors).toEqual([]);
    expect(JSON.parse(main.outputs["changed-files"]!)).toEqual(["in-workspace.txt"]);
    // The blocked attempt is counted in the summary and recorded in the trace.
    expect(main.summary).toMatch(/Network attempts blocked \| [1-9]/);
    const trace = readFileSync(path.join(path.dirname(main.outputs["patch-path"]!), "trace.jsonl"), "utf8");
    expect(trace).toContain('"type":"network_blocked"');
  });

  it("lets an allowlisted host through the policy while direct connections still fail", async () => {
    const { report } = await adversary("allowlist", { "allowed-domains": `127.0.0.1:${port}` });
    expect(report).toMatchObject({ done: "1", direct_loopback: "0", via_policy: "1" });
  });

  it("reaches nothing with network: none", async () => {
    const { report } = await adversary("none");
    expect(report).toMatchObject({ done: "1", direct_loopback: "0", via_policy: "0" });
  });
});
