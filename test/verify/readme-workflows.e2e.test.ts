/**
 * The "Verify and fix" and "Attempts" workflows of docs/verify.md, as written: the
 * agent-runner step's `with:` taken from the docs' block itself, on the
 * issue_comment event it declares, after `actions/checkout` with no `ref`
 * (the default branch), through dist/main.js with the fake GitHub, real
 * claude against the stub model. The only additions are what points the run
 * at the stubs: `base-url`, `model`, the secret's value and bwrap's PATH (and the
 * scenario's command agent switched off).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { AGENT_PATH } from "../agents/helpers.js";
import { readBranchFile } from "../support/git-fixtures.js";
import { scenario, type Scenario } from "../github/scenario.js";
import { readDoc, sectionOf, yamlBlocks } from "../support/docs.js";
import { shellStep } from "../support/stub-model-tools.js";
import { startStubModel, type StubModel } from "../support/stub-model.js";

const page = readDoc("docs/verify.md");
const KEY = "sk-ant-test-key-readme-verify-0123456789";

interface Workflow {
  on: Record<string, unknown>;
  jobs: Record<string, { steps: { uses?: string; with?: Record<string, unknown> }[] }>;
}

/** The docs section's first YAML block, and its agent-runner step's inputs with the secret filled in. */
function readmeWorkflow(heading: string): { workflow: Workflow; inputs: Record<string, string> } {
  const block = yamlBlocks(sectionOf(page, `## ${heading}`))[0];
  if (!block) throw new Error(`docs/verify.md: no workflow under ## ${heading}`);
  const workflow = YAML.parse(block) as Workflow;
  const step = Object.values(workflow.jobs)
    .flatMap((j) => j.steps)
    .find((s) => s.uses?.startsWith("agent-runner/agent-runner@"));
  if (!step?.with) throw new Error(`docs/verify.md ## ${heading}: no agent-runner step`);
  const inputs = Object.fromEntries(
    Object.entries(step.with).map(([k, v]) => [k, String(v).replace("${{ secrets.ANTHROPIC_API_KEY }}", KEY)]),
  );
  return { workflow, inputs };
}

const TEST_JS = `const add = require("./add.js");
if (add(2, 3) !== 5) { console.error("README-CHECK: add(2, 3) should be 5, got " + add(2, 3)); process.exit(1); }
console.log("ok");
`;
const FILES = {
  "package.json": JSON.stringify({ name: "adder", private: true, scripts: { test: "node test.js" } }, null, 2) + "\n",
  "test.js": TEST_JS,
  "add.js": "module.exports = (a, b) => 0;\n",
};
const WRONG = `printf 'module.exports = (a, b) => a - b;\\n' > add.js`;
const RIGHT = `printf 'module.exports = (a, b) => a + b;\\n' > add.js`;

let stub: StubModel;
let s: Scenario | undefined;
beforeAll(async () => {
  stub = await startStubModel([]);
});
afterAll(async () => {
  await stub?.close();
});
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const stubInputs = () => ({ "agent-command": "", model: "claude-sonnet-4-5", "base-url": stub.url, "agent-version": "preinstalled", sandbox: "bwrap" });

describe("docs/verify.md workflows, as written", () => {
  it("Verify and fix: `npm test` fails, the fix round passes, the change is delivered as a pull request; verified=passed", async () => {
    const { workflow, inputs } = readmeWorkflow("Verify and fix");
    expect(Object.keys(workflow.on)).toEqual(["issue_comment"]);
    expect(inputs["verify-command"]).toBe("npm test");
    s = await scenario({ fixture: "issue_comment.issue", files: FILES, checkout: "default-branch" });
    stub.setScript([shellStep("claude", WRONG), { text: "First try." }, shellStep("claude", RIGHT), { text: "Fixed add." }]);
    const before = stub.modelRequests().length;
    const r = await s.run({ ...inputs, ...stubInputs() }, { PATH: AGENT_PATH });
    const { outputs } = r;
    expect(r.exitCode, r.log).toBe(0);
    expect(outputs.verified).toBe("passed");
    const requests = stub.modelRequests().slice(before);
    expect(requests).toHaveLength(4);
    expect(JSON.stringify(requests[2]!.body)).toContain("README-CHECK: add(2, 3) should be 5, got -1");
    // Delivered: an issue's change arrives as a pull request with the fixed file.
    expect(s.gh.pulls()).toHaveLength(1);
    expect(await readBranchFile(s.repo.origin, outputs.branch!, "add.js")).toBe("module.exports = (a, b) => a + b;\n");
  }, 300_000);

  it("Attempts: three attempts under one budget, a passing one delivered; attempts lists three, one chosen", async () => {
    const { inputs } = readmeWorkflow("Attempts");
    expect(inputs).toMatchObject({ "verify-command": "npm test", attempts: "3", select: "verify" });
    s = await scenario({ fixture: "issue_comment.issue", files: FILES, checkout: "default-branch" });
    // Attempts ask in any order: each conversation gets the right shell call first, then its answer.
    stub.setScript((req) => (stub.conversation(req).some((c) => c.type === "tool_result") ? { text: "Fixed add." } : shellStep("claude", RIGHT)));
    const r = await s.run({ ...inputs, ...stubInputs() }, { PATH: AGENT_PATH });
    const { outputs } = r;
    expect(r.exitCode, r.log).toBe(0);
    expect(outputs.verified).toBe("passed");
    const attempts = JSON.parse(outputs.attempts!) as { chosen: boolean; verified: string }[];
    expect(attempts).toHaveLength(3);
    expect(attempts.filter((a) => a.chosen)).toHaveLength(1);
    expect(attempts.find((a) => a.chosen)!.verified).toBe("passed");
    expect(s.gh.pulls()).toHaveLength(1);
    expect(await readBranchFile(s.repo.origin, outputs.branch!, "add.js")).toBe("module.exports = (a, b) => a + b;\n");
  }, 400_000);
});
