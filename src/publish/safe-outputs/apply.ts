/**
 * The publish side: every request in the file checked again against the
 * configured limits (the MCP server's check is never trusted: the agent can
 * write the file itself, and in phase publish the artifact came from a job
 * that ran agent code), then applied one by one. A refused request never
 * stops the others; each ends as one report entry.
 */
import { apiErrorMessage } from "../../github/client.js";
import type { IssueRef } from "../../github/api.js";
import { oneLine } from "../../text.js";
import { enabledKinds, type SafeOutputsConfig } from "../../safe-outputs/config.js";
import { Refusal, type ApplyContext, type EnabledKind } from "../../safe-outputs/kind.js";
import { SAFE_OUTPUT_KINDS } from "../../safe-outputs/registry.js";
import type { RawRequest } from "./requests.js";

export interface SafeOutputResult {
  type: string;
  status: "applied" | "refused";
  url?: string;
  reason?: string;
}

export interface ApplyOptions {
  config: SafeOutputsConfig | undefined;
  requests: RawRequest[];
  /** Where to apply; undefined: nothing is applied and every request is refused with `notApplied`. */
  ctx?: ApplyContext;
  notApplied?: string;
}

/** Counts toward `max`, per kind, in the order the requests were made. */
class Budget {
  private used = new Map<string, number>();
  take(kind: EnabledKind, cost: number): string | undefined {
    const used = this.used.get(kind.key) ?? 0;
    if (used + cost > kind.limits.max) return `over the limit: '${kind.key}' allows ${kind.limits.max}${kind.key.endsWith("labels") ? " label(s)" : ""} per run`;
    this.used.set(kind.key, used + cost);
    return undefined;
  }
}

export async function applyRequests(opts: ApplyOptions): Promise<SafeOutputResult[]> {
  const kinds = enabledKinds(opts.config);
  const budget = new Budget();
  const out: SafeOutputResult[] = [];
  for (const raw of opts.requests) out.push(await applyOne(raw, kinds, budget, opts));
  return out;
}

async function applyOne(raw: RawRequest, kinds: EnabledKind[], budget: Budget, opts: ApplyOptions): Promise<SafeOutputResult> {
  const refuse = (type: string, reason: string): SafeOutputResult => ({ type, status: "refused", reason: `line ${raw.line}: ${reason}` });
  if ("error" in raw) return refuse("invalid", raw.error);
  const { type, ...args } = raw.value;
  const known = typeof type === "string" ? SAFE_OUTPUT_KINDS.find((k) => k.tool === type) : undefined;
  if (!known) return refuse("invalid", `'type' must name a tool (${SAFE_OUTPUT_KINDS.map((k) => k.tool).join(", ")})`);
  const kind = kinds.find((k) => k.key === known.key);
  if (!kind) return refuse(known.tool, `'${known.key}' is not enabled in the 'safe-outputs' input`);
  const checked = kind.check(args);
  if (!checked.ok) return refuse(kind.tool, checked.reason);
  const over = budget.take(kind, checked.request.cost);
  if (over) return refuse(kind.tool, over);
  if (!opts.ctx) return refuse(kind.tool, opts.notApplied ?? "not applied");
  try {
    const target = kind.targeted ? await resolveTarget(kind, checked.request.requestedNumber, opts.ctx) : undefined;
    const applied = await checked.request.apply(opts.ctx, target);
    return { type: kind.tool, status: "applied", ...(applied.url ? { url: applied.url } : {}) };
  } catch (e) {
    if (e instanceof Refusal) return refuse(kind.tool, e.message);
    return refuse(kind.tool, `GitHub refused it: ${oneLine(apiErrorMessage(e), 200)}`);
  }
}

/** The issue/PR a request acts on, as `target` allows it, checked to exist in this repository. */
async function resolveTarget(kind: EnabledKind, requested: number | undefined, ctx: ApplyContext): Promise<IssueRef> {
  const target = kind.limits.target;
  const thread = ctx.thread?.number;
  let number: number | undefined;
  if (target === undefined) {
    if (requested !== undefined && requested !== thread) throw new Refusal(`#${requested} is outside 'target': only the triggering issue or pull request`);
    number = thread;
    if (number === undefined) throw new Refusal(`this run has no triggering issue or pull request; give '${kind.key}' a 'target'`);
  } else if (target === "*") {
    number = requested ?? thread;
    if (number === undefined) throw new Refusal("no issue or pull request named (and none triggered this run)");
  } else {
    if (requested !== undefined && requested !== target) throw new Refusal(`#${requested} is outside 'target': only #${target}`);
    number = target;
  }
  const ref = await ctx.api.issue(number);
  if (!ref) throw new Refusal(`#${number} is not an issue or pull request of this repository`);
  return ref;
}
