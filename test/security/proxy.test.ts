/**
 * Issue 17 item 9 (network): the filtering proxy under attack. Through dist/,
 * a hostile `agent: command` in bwrap with `network: allowlist` tries an
 * allowed name that resolves to loopback (what DNS rebinding gives), the
 * cloud metadata address, private and ULA addresses, a port no rule names,
 * and a Host header naming another virtual host. A listener on 127.0.0.1
 * records what really arrived. Then the same proxy in-process with a fake
 * resolver, for answers only a hostile DNS gives (10/8, CGNAT, link-local,
 * fd00::/8, IPv4-mapped loopback), and for CONNECT to port 80.
 */
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { lookup } from "node:dns/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nonPublicRange } from "../../src/sandbox/addresses.js";
import { startFilteringProxy } from "../../src/sandbox/proxy.js";
import { attackReport, blockedAttempts } from "../support/attack-report.js";
import { runActionSteps } from "../support/harness.js";
import { makeWorkspace } from "../agents/helpers.js";
import { connectThrough, recordingLogger, recordingServer } from "../sandbox/helpers.js";

let listener: Awaited<ReturnType<typeof recordingServer>>;
/** A name of this machine that the system resolver answers with a loopback address (undefined: none here). */
let loopbackName: string | undefined;
beforeAll(async () => {
  listener = await recordingServer();
  const name = os.hostname();
  const addr = await lookup(name).then((a) => a.address, () => undefined);
  loopbackName = addr && nonPublicRange(addr) && addr.startsWith("127.") && !/^localhost$/i.test(name) ? name : undefined;
});
afterAll(() => listener.close());

/** `REPORT <name>=<http status>` for curl through the agent's proxy. */
const CURL = `c() { local name=$1; shift; code=$(curl -sS -o /dev/null -w '%{http_code}' -m 10 -x "$HTTP_PROXY" "$@" 2>/dev/null); echo "REPORT $name=$code"; }`;

async function agentThroughProxy(allowed: string[], body: string) {
  const script = path.join(mkdtempSync(path.join(os.tmpdir(), "sec-proxy-")), "agent.sh");
  writeFileSync(script, `#!/bin/bash\n${CURL}\n${body}\necho "REPORT done=1"\n`);
  chmodSync(script, 0o755);
  const before = listener.requests.length;
  const { main } = await runActionSteps({
    workspace: makeWorkspace(),
    inputs: { agent: "command", "agent-command": script, prompt: "attack", sandbox: "bwrap", network: "allowlist", "allowed-domains": allowed.join("\n"), comment: "none", "upload-artifacts": "false" },
  });
  return { main, report: attackReport(main), blocked: blockedAttempts(main), arrived: listener.requests.slice(before) };
}

describe("filtering proxy under attack from the agent (bwrap, through dist/)", () => {
  it("refuses an allowed name resolving to loopback, metadata/private/ULA addresses, and ports no rule names", async (t) => {
    if (!loopbackName) t.skip();
    const port = listener.port;
    const { report, blocked, arrived } = await agentThroughProxy(
      [`${loopbackName}:${port}`, "127.0.0.1"],
      `
c rebind "http://${loopbackName}:${port}/rebind"
c rebind_tls -p "https://${loopbackName}:${port}/"
c metadata "http://169.254.169.254/latest/meta-data/"
c private "http://10.0.0.1/"
c ula -p "https://[fd00::1]/"
c mapped "http://[::ffff:169.254.169.254]/"
c other_port "http://127.0.0.1:${port}/other-port"
c ssh -p "https://127.0.0.1:22/"
`,
    );
    expect(report).toMatchObject({ done: "1", rebind: "403", metadata: "403", private: "403", mapped: "403", other_port: "403" });
    // A refused CONNECT is a failed tunnel: curl reports 403 or 000, never a response from the target.
    for (const k of ["rebind_tls", "ula", "ssh"]) expect(report[k], k).toMatch(/^(403|000)$/);
    expect(arrived).toEqual([]);
    const details = blocked.map((b) => b.detail).join("\n");
    expect(details).toMatch(new RegExp(`${loopbackName}:${port} resolves to 127\\.0\\.0\\.1, which is a loopback address`));
    expect(details).toContain(`127.0.0.1:${port} is not allowed: no allowed-domains rule names port ${port}`);
    // Port 22 is the second refusal recorded for 127.0.0.1 (one entry per host).
    expect(blocked.find((b) => b.host === "127.0.0.1")!.detail).toContain("(2 attempts)");
    for (const host of ["169.254.169.254", "10.0.0.1", "fd00::1"]) expect(blocked.map((b) => b.host)).toContain(host);
  });

  it("sends the target as Host (no smuggling to another virtual host), and a rule naming the IP unlocks the name", async () => {
    const port = listener.port;
    const names = loopbackName ? [`${loopbackName}:${port}`] : [];
    const { report, arrived } = await agentThroughProxy(
      [`127.0.0.1:${port}`, ...names],
      `
c smuggle -H "Host: admin.internal" "http://127.0.0.1:${port}/smuggle"
${loopbackName ? `c named "http://${loopbackName}:${port}/named"` : ""}
`,
    );
    expect(report).toMatchObject({ done: "1", smuggle: "200" });
    const smuggled = arrived.find((r) => r.url === "/smuggle")!;
    expect(smuggled.headers.host).toBe(`127.0.0.1:${port}`);
    if (loopbackName) {
      expect(report.named).toBe("200");
      expect(arrived.find((r) => r.url === "/named")!.headers.host).toBe(`${loopbackName}:${port}`);
    }
  });
});


describe("filtering proxy against a hostile resolver", () => {
  it("refuses every non-public answer, mapped forms included, and connects only to the address it checked", async () => {
    const answers: Record<string, string[]> = {
      "private.evil.example": ["10.0.0.5"],
      "cgnat.evil.example": ["100.64.1.1"],
      "metadata.evil.example": ["169.254.169.254"],
      "ula.evil.example": ["fd00::1"],
      "linklocal6.evil.example": ["fe80::1"],
      "mapped.evil.example": ["::ffff:127.0.0.1"],
      "mapped-hex.evil.example": ["::ffff:7f00:1"],
      "nat64.evil.example": ["64:ff9b::a9fe:a9fe"],
      "rebind.evil.example": ["127.0.0.1"],
    };
    const asked: string[] = [];
    const resolve = async (h: string) => {
      asked.push(h);
      return answers[h] ?? [];
    };
    const port = listener.port;
    const proxy = await startFilteringProxy({ allowedDomains: [`*.evil.example:${port}`, "*.evil.example"], log: recordingLogger(), resolve });
    try {
      const before = listener.requests.length;
      for (const name of Object.keys(answers)) {
        expect(await connectThrough(proxy.port!, `${name}:${port}`), name).toBe("HTTP/1.1 403 Forbidden");
      }
      expect(listener.requests.length).toBe(before);
      const details = proxy.blockedAttempts().map((b) => b.detail).join("\n");
      for (const frag of ["a private address (10.0.0.0/8)", "carrier-grade NAT", "link-local address (169.254.0.0/16", "unique local address (fc00::/7)", "link-local address (fe80::/10)", "written as an IPv4-mapped IPv6 address", "written as a NAT64 address", "a loopback address (127.0.0.0/8)"])
        expect(details).toContain(frag);
      // One lookup per attempt: the address checked is the address connected to.
      expect(asked.filter((h) => h === "rebind.evil.example")).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });

  it("a mixed answer connects to the allowed address only; CONNECT to port 80 needs a rule naming 80", async () => {
    const port = listener.port;
    const proxy = await startFilteringProxy({
      allowedDomains: [`mixed.example:${port}`, `127.0.0.1:${port}`, "web.example"],
      log: recordingLogger(),
      resolve: async (h) => (h === "mixed.example" ? ["10.9.9.9", "127.0.0.1"] : ["127.0.0.1"]),
    });
    try {
      expect(await connectThrough(proxy.port!, `mixed.example:${port}`)).toBe("HTTP/1.1 200 Connection Established");
      expect(await connectThrough(proxy.port!, "web.example:80")).toBe("HTTP/1.1 403 Forbidden");
      expect(proxy.blockedAttempts().map((b) => b.detail).join("\n")).toContain("refused as a CONNECT tunnel");
    } finally {
      await proxy.close();
    }
  });
});
