/**
 * The inputs of `phase: plan` and `phase: gather`. These phases run no
 * agent, so they read only their own inputs, from the step (not the config
 * file: what a workflow fans out over is the workflow's choice), and every
 * problem names the input and the fix.
 */
import type { HostContext } from "../config/host.js";
import type { RawInputs } from "../config/parse.js";
import { ConfigurationError } from "../errors.js";
import { allowForeignItems, parseRepository } from "../shared/item-ref.js";
import type { RepoRef } from "../shared/trigger.js";
import { MATRIX_LIMIT } from "./items.js";

export type FanOutPhase = "plan" | "gather";

export function fanOutPhase(raw: RawInputs): FanOutPhase | undefined {
  const phase = raw.phase?.trim();
  return phase === "plan" || phase === "gather" ? phase : undefined;
}

export type PlanSource = { kind: "query"; query: string } | { kind: "items"; text: string } | { kind: "repositories"; text: string };

export interface FanOutSettings {
  phase: FanOutPhase;
  token: string;
  /** `repository`, default this one: the scope of a query, the repository of bare numbers, where the report goes. */
  repository: RepoRef;
  /** `allowForeign`: keep items of other owners than the workflow's (`allow-foreign-items`). */
  plan?: { source: PlanSource; maxItems: number; allowForeign: boolean };
  /** `poolCapUsd`: `max-total-cost-usd`, whose pool the report shows (ledger/pool.ts). */
  gather?: { expected?: string; reportIssue?: number | "new"; poolCapUsd?: number };
}

function given(raw: RawInputs, name: keyof RawInputs): string | undefined {
  return raw[name]?.trim() || undefined;
}

export function parseFanOutSettings(raw: RawInputs, host: Pick<HostContext, "repository">, phase: FanOutPhase): FanOutSettings {
  const problems: string[] = [];
  const repoText = given(raw, "repository") ?? host.repository;
  const repository = repoText ? parseRepository(repoText) : undefined;
  if (!repository) problems.push(`Input 'repository': ${repoText ? `'${repoText.slice(0, 140)}' is not owner/repo` : "is required here (GITHUB_REPOSITORY is not set)"}.`);
  const token = raw["github-token"]?.trim() ?? "";

  let plan: FanOutSettings["plan"];
  let gather: FanOutSettings["gather"];
  if (phase === "plan") {
    const sources = (["items-query", "items", "repositories"] as const).filter((n) => given(raw, n));
    if (sources.length !== 1)
      problems.push(
        sources.length
          ? `Inputs ${sources.map((s) => `'${s}'`).join(" and ")}: give only one source of items for 'phase: plan'.`
          : "Input 'items-query': 'phase: plan' needs one source of items: 'items-query' (a search query), 'items' (a JSON array of numbers) or 'repositories' (owner/repo lines).",
      );
    const maxText = given(raw, "max-items") ?? "20";
    const maxItems = Number(maxText);
    if (!/^\d+$/.test(maxText) || maxItems < 1 || maxItems > MATRIX_LIMIT)
      problems.push(`Input 'max-items': '${maxText.slice(0, 20)}' must be a whole number from 1 to ${MATRIX_LIMIT} (GitHub runs at most ${MATRIX_LIMIT} jobs per matrix).`);
    if (sources[0] === "items-query" && !token) problems.push("Input 'github-token': is empty; the search API needs it (the default is ${{ github.token }}).");
    const source: PlanSource | undefined =
      sources[0] === "items-query"
        ? { kind: "query", query: given(raw, "items-query")! }
        : sources[0] === "items"
          ? { kind: "items", text: given(raw, "items")! }
          : sources[0] === "repositories"
            ? { kind: "repositories", text: given(raw, "repositories")! }
            : undefined;
    const allowForeign = foreignItemsInput(raw, problems);
    if (source && sources.length === 1) plan = { source, maxItems, allowForeign };
  } else {
    const reportText = given(raw, "report-issue");
    let reportIssue: number | "new" | undefined;
    if (reportText) {
      if (reportText.toLowerCase() === "new") reportIssue = "new";
      else if (/^#?\d{1,10}$/.test(reportText) && Number(reportText.replace("#", "")) > 0) reportIssue = Number(reportText.replace("#", ""));
      else problems.push(`Input 'report-issue': '${reportText.slice(0, 40)}' must be an issue number or 'new'.`);
      if (!token) problems.push("Input 'github-token': is empty; posting the report comment needs it.");
    }
    const expected = given(raw, "items");
    const poolText = given(raw, "max-total-cost-usd");
    const poolCapUsd = poolText !== undefined ? Number(poolText) : undefined;
    if (poolCapUsd !== undefined && !(Number.isFinite(poolCapUsd) && poolCapUsd > 0)) problems.push(`Input 'max-total-cost-usd': '${poolText!.slice(0, 40)}' is not a positive number of US dollars, e.g. 10.`);
    gather = {
      ...(expected ? { expected } : {}),
      ...(reportIssue !== undefined ? { reportIssue } : {}),
      ...(poolCapUsd !== undefined && poolCapUsd > 0 ? { poolCapUsd } : {}),
    };
  }
  if (problems.length) throw new ConfigurationError(problems);
  return { phase, token, repository: repository!, ...(plan ? { plan } : {}), ...(gather ? { gather } : {}) };
}

function foreignItemsInput(raw: RawInputs, problems: string[]): boolean {
  try {
    return allowForeignItems(raw);
  } catch (e) {
    problems.push((e as Error).message);
    return false;
  }
}
