/**
 * Secrets the old scanner let out (#32), through dist/ against the fake
 * GitHub: an AWS access key id on its own (no secretlint rule knows it), a
 * Slack token as the name of an empty file (no added line at all), and the
 * run's own secret written hex-encoded or split across two string literals.
 * Each run is held: nothing pushed, `threats` names the kind and the place,
 * and no output, comment or log holds the value.
 */
import { afterEach, describe, expect, it } from "vitest";
import { listBranches } from "../support/git-fixtures.js";
import { scenario, type Scenario } from "../github/scenario.js";

let s: Scenario | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

interface Finding {
  kind: string;
  where: string;
  file?: string;
  detail: string;
}
const threats = (outputs: Record<string, string>): Finding[] => JSON.parse(outputs.threats ?? "[]") as Finding[];

async function held(agent: string, inputs: Record<string, string> = {}) {
  s = await scenario({ fixture: "issue_comment.issue", agent: `${agent}\nsed -i 's/Teh/The/' README.md\necho 'Done.'` });
  const r = await s.run(inputs);
  expect(r.exitCode, r.log).not.toBe(0);
  expect(await listBranches(s.repo.origin)).toEqual(["main"]);
  expect(s.gh.pulls()).toEqual([]);
  const shown = JSON.stringify(s.gh.issueComments(7)) + JSON.stringify(r.outputs) + r.summary + r.log;
  return { r, shown };
}

describe("secret leaks the old scanner missed are held (through dist/)", () => {
  it("an AWS access key id on its own", async () => {
    const { r, shown } = await held(`mkdir -p deploy && printf 'export KEY_ID=AKIAQX4ZR2VJ7NDKW3PL\\n' > deploy/env.sh`);
    expect(threats(r.outputs)).toEqual(expect.arrayContaining([{ kind: "secret", where: "patch", file: "deploy/env.sh", detail: "aws-access-token" }]));
    expect(shown).not.toContain("QX4ZR2VJ7NDKW3PL");
  });

  it("a Slack token as the name of an empty file: held, and the name is masked in threats, changed-files and the comment", async () => {
    const token = "xoxb-730191371696-7301913716961-Ry8Tq2Lm9Xv4Pw7Nb3Cf6Hj1";
    const { r, shown } = await held(`touch '${token}'`);
    expect(threats(r.outputs)).toEqual(expect.arrayContaining([{ kind: "secret", where: "file name", file: "***", detail: "slack-bot-token" }]));
    expect(JSON.parse(r.outputs["changed-files"] ?? "[]")).toContain("(a file whose name holds a secret)");
    expect(shown).not.toContain("Ry8Tq2Lm9Xv4Pw7Nb3Cf6Hj1");
  });

  it("the run's own secret written hex-encoded", async () => {
    const value = "own-secret-9f8e7d6c5b4a3f2e";
    const { r, shown } = await held(`printf 'blob=%s\\n' "$(printf %s "$API_KEY" | od -An -tx1 | tr -d ' \\n')" > notes.txt`, { secrets: `API_KEY=${value}` });
    expect(threats(r.outputs)).toEqual(expect.arrayContaining([expect.objectContaining({ kind: "run-secret", where: "patch", file: "notes.txt" })]));
    expect(shown).not.toContain(Buffer.from(value).toString("hex"));
    expect(shown).not.toContain(value);
  });

  it("the run's own secret split across two string literals", async () => {
    const value = "own-secret-9f8e7d6c5b4a3f2e";
    const { r, shown } = await held(`printf 'const k = "%s" + "%s";\\n' "\${API_KEY:0:13}" "\${API_KEY:13}" > src/k.js`, { secrets: `API_KEY=${value}` });
    expect(threats(r.outputs)).toEqual(expect.arrayContaining([expect.objectContaining({ kind: "run-secret", where: "patch", file: "src/k.js" })]));
    expect(shown).not.toContain(value);
  });
});
