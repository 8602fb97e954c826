/**
 * Each real agent CLI, scripted by the stub model to call the `agent-runner`
 * MCP server's tools, run by the action (dist/main.js) on an issue comment
 * against the fake GitHub: the allowed label and the comment appear; a label
 * outside `allowed` is refused (the model is told why) and never reaches
 * GitHub. One run per CLI (CI budget). Codex sees the tools in a Responses
 * API `namespace` (`mcp__agent_runner`), the stub answers in that shape.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_PATH } from "../agents/helpers.js";
import { scenario, type Scenario } from "../github/scenario.js";
import { startStubModel, type RecordedRequest, type StubModel, type StubStep } from "../support/stub-model.js";

let stub: StubModel;
beforeAll(async () => {
  stub = await startStubModel([]);
});
afterAll(async () => {
  await stub?.close();
});

interface Cli {
  name: "claude" | "codex" | "opencode" | "gemini";
  inputs(stub: StubModel): Record<string, string>;
}

const CLIS: Cli[] = [
  { name: "claude", inputs: (m) => ({ agent: "claude", model: "claude-sonnet-4-5", "base-url": m.url, secrets: "ANTHROPIC_API_KEY=sk-ant-test-key-0123456789abcdef" }) },
  // An unknown model has no tool search: Codex lists MCP tools up front.
  { name: "codex", inputs: (m) => ({ agent: "codex", model: "stub-model", "base-url": `${m.url}/v1`, secrets: "OPENAI_API_KEY=sk-openai-test-key-0123456789abcdef" }) },
  { name: "opencode", inputs: (m) => ({ agent: "opencode", model: "stub-model", "base-url": `${m.url}/v1`, secrets: "OPENAI_API_KEY=sk-test-opencode-key-0123456789abcdef" }) },
  { name: "gemini", inputs: (m) => ({ agent: "gemini", model: "gemini-2.5-pro", "base-url": m.url, secrets: "GEMINI_API_KEY=AIza-test-gemini-key-0123456789abcdef" }) },
];

/** Tool names as the CLI declared them to the model, whatever its API's shape (namespaces flattened as `ns/name`). */
function declaredTools(req: RecordedRequest): string[] {
  const body = (req.body ?? {}) as { tools?: Record<string, unknown>[] };
  return (body.tools ?? []).flatMap((t) => {
    const fn = t["function"] as { name?: string } | undefined;
    const decls = t["functionDeclarations"] as { name: string }[] | undefined;
    const nested = t["tools"] as { name: string }[] | undefined;
    if (decls) return decls.map((d) => d.name);
    if (nested) return nested.map((n) => `${String(t["name"])}/${n.name}`);
    return [fn?.name ?? String(t["name"] ?? "")];
  });
}

/** Calls the CLI's name for our `tool`; the model's next turn is the next step. */
function callOurTool(req: RecordedRequest, tool: string, args: Record<string, unknown>): StubStep {
  const name = declaredTools(req).find((n) => n.endsWith(`__${tool}`) || n.endsWith(`_${tool}`) || n.endsWith(`/${tool}`) || n === tool);
  if (!name) return { text: `NO-TOOL ${tool} in ${declaredTools(req).join(",")}` };
  return { tool: name, args };
}

const SAFE_OUTPUTS = JSON.stringify({ "add-labels": { allowed: ["bug", "question"], max: 2 }, "add-comment": { max: 1 } });

describe.each(CLIS)("$name calls the agent-runner tools", (cli) => {
  let s: Scenario | undefined;
  afterAll(async () => {
    await s?.close();
  });

  it("an allowed label and a comment are applied; a label outside allowed is refused by the server and never written", async () => {
    s = await scenario({ fixture: "issue_comment.issue" });
    let n = 0;
    stub.setScript((req) => {
      const step = n++;
      if (step === 0) return callOurTool(req, "add_labels", { labels: ["wontfix"] });
      if (step === 1) return callOurTool(req, "add_labels", { labels: ["bug"] });
      if (step === 2) return callOurTool(req, "add_comment", { body: `Triaged by ${cli.name}.` });
      return { text: "done" };
    });
    const before = stub.modelRequests().length;
    const r = await s.run({ ...cli.inputs(stub), "agent-command": "", "agent-version": "preinstalled", "safe-outputs": SAFE_OUTPUTS }, { PATH: AGENT_PATH });
    expect(r.exitCode, r.log).toBe(0);
    const requests = stub.modelRequests().slice(before).filter((q) => q.kind === "model");
    // The refusal reached the model as the tool's answer (our server's; Gemini CLI checks the enum itself first).
    const seen = JSON.stringify(requests.map((q) => q.body));
    const refusal = /Refused: labels\.0: must be one of the allowed labels/.exec(seen) ?? /.{0,300}wontfix.{0,300}/.exec(seen.split("functionResponse").slice(1).join(""));
    expect(refusal?.[0] ?? "", "the refusal the model was shown").toMatch(/Refused: labels\.0: must be one of the allowed labels|allowed values|enum/i);
    const entries = JSON.parse(r.outputs["safe-outputs"] ?? "[]") as { type: string; status: string }[];
    expect(entries.map((e) => `${e.type}:${e.status}`), r.log).toEqual(["add_labels:applied", "add_comment:applied"]);
    expect(s.gh.repo().issues.get(7)!.labels).toEqual(["bug"]);
    expect(s.gh.issueComments(7).filter((c) => c.body === `Triaged by ${cli.name}.`)).toHaveLength(1);
    // Never written as a label (the progress comment may quote the refused call, depending on when it updates).
    expect(s.gh.writes("* /repos/*/*/issues/*/labels").some((w) => JSON.stringify(w.body ?? "").includes("wontfix"))).toBe(false);
  });
});
