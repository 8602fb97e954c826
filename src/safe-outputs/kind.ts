/**
 * What a safe-output kind is: the GitHub write an agent may ask for, its
 * limits in the `safe-outputs` input, the tool the `agent-runner` MCP server
 * lists, and how the publish step applies a request. The same definition
 * serves both sides, so the MCP server's check and the host's re-check
 * cannot drift apart: the host never trusts the first one, it runs it again.
 *
 * Adding a kind is one file in this folder plus one line in registry.ts.
 */
import * as z from "../shared/zod.js";
import type { GitHubApi, IssueRef } from "../github/api.js";
import type { SafeMarkdown } from "../shared/safe-markdown.js";
import { COMMENT_LIMIT } from "../github/limits.js";

/** `target`: omitted = the triggering issue/PR; a number = that one; `"*"` = any issue/PR the agent names. */
export const Target = z.union([z.literal("*"), z.number().check(z.int(), z.positive())]);
export type Target = z.infer<typeof Target>;

/** Limits every kind has. */
export interface CommonLimits {
  /** How many requests (labels: how many labels) are applied at most. */
  max: number;
  target?: Target;
}

/** GitHub's own limit for an issue or comment body. */
export const BODY_LIMIT = COMMENT_LIMIT;
/** GitHub's limit for an issue title. */
export const TITLE_LIMIT = 256;
/** Cap on `max`: a run asking for more writes than this is a misconfiguration. */
export const MAX_CAP = 100;

export const Body = z.string().check(z.trim(), z.minLength(1, "must not be empty"), z.maxLength(BODY_LIMIT, `must be at most ${BODY_LIMIT} characters`));
export const Title = z.string().check(z.trim(), z.minLength(1, "must not be empty"), z.maxLength(TITLE_LIMIT, `must be at most ${TITLE_LIMIT} characters`));
export const IssueNumber = z.number().check(z.int(), z.gte(1));

/** What the host needs to apply a request (phase all/publish, token on the host). */
export interface ApplyContext {
  api: GitHubApi;
  /** The issue or pull request that triggered the run. */
  thread?: { number: number; kind: "issue" | "pull_request" };
  /** Markdown as it may be posted: redacted, then the posting filter (outside images/links inert, mentions broken). */
  post(markdown: string): SafeMarkdown;
  /** A one-line text (titles): redacted, invisible characters stripped, cut to `max`. */
  line(text: string, max: number): string;
}

export interface Applied {
  url?: string;
}

/** A request that passed the argument check; the target is resolved by the caller. */
export interface CheckedRequest {
  /** What it counts against `max` (1, or the number of labels). */
  cost: number;
  /** The issue/PR number the agent named, if any. */
  requestedNumber?: number;
  /** Writes it, given the checked target (an existing issue/PR of this repository; undefined for kinds without one). Throws Refusal to refuse. */
  apply(ctx: ApplyContext, target: IssueRef | undefined): Promise<Applied>;
}

/** A kind's own decision not to write (label not on the issue, line not in the diff): a reason for the report. */
export class Refusal extends Error {
  override name = "Refusal";
}

/** One enabled kind with its limits bound: what the MCP server lists and the publish side checks against. */
export interface EnabledKind {
  key: string;
  tool: string;
  limits: CommonLimits;
  /** Whether the kind acts on an issue/PR (`target` applies). */
  targeted: boolean;
  /** The tool's description, limits spelled out so the model sees them. */
  description: string;
  /** The tool's arguments (strict: unknown keys are refused). */
  args: z.ZodMiniType;
  /** Parses arguments (the `type` key removed) into a checked request, or says why not. */
  check(args: unknown): { ok: true; request: CheckedRequest } | { ok: false; reason: string };
  /** The limits as the input would spell them, for handing to the MCP server. */
  normalized: Record<string, unknown>;
}

export interface KindDefinition<O extends object, S extends z.core.$ZodShape> {
  /** Key in the `safe-outputs` input (`add-comment`). */
  key: string;
  /** Tool name and JSONL `type` (`add_comment`). */
  tool: string;
  /** Default for `max`. */
  defaultMax: number;
  /** The argument naming the issue/PR (`issue_number`, `pull_number`); absent: the kind takes no target. */
  targetArg?: "issue_number" | "pull_number";
  /** The kind's own limits beyond `max`/`target` (a strict zod object; every key optional or defaulted). */
  options: z.ZodMiniType<O>;
  /** Checks the configured limits together (e.g. `allowed` required); a problem sentence, or undefined. */
  configProblem?(o: O): string | undefined;
  description(o: O, common: CommonLimits): string;
  /** The arguments for these limits, without the target argument (added when `target` lets the agent name one). */
  args(o: O, common: CommonLimits): z.ZodMiniObject<S>;
  cost?(a: z.output<z.ZodMiniObject<S>>, o: O): number;
  /** Checks that need more than the schema: a reason, or undefined. */
  refine?(a: z.output<z.ZodMiniObject<S>>, o: O): string | undefined;
  apply(a: z.output<z.ZodMiniObject<S>>, o: O, ctx: ApplyContext, target: IssueRef | undefined): Promise<Applied>;
}

/** Shown to a model that misspelt an argument: the first few problems, each naming the field. */
export function describeIssues(error: z.core.$ZodError, limit = 5): string {
  return error.issues
    .slice(0, limit)
    .map((i) => {
      const where = i.path.length ? i.path.join(".") : "arguments";
      if (i.code === "unrecognized_keys") return `${where}: unknown field(s) ${i.keys.map((k) => `'${k}'`).join(", ")}`;
      return `${where}: ${i.message}`;
    })
    .join("; ");
}

/** The `issue_number` argument as a kind's target allows it. */
function targetArgSchema(target: Target | undefined): z.ZodMiniOptional<z.ZodMiniNumber<number>> | undefined {
  if (target === undefined) return undefined;
  const described = target === "*" ? "Issue or pull request number; default: the one that triggered this run." : `Must be ${target} (the only one allowed).`;
  return z.optional(IssueNumber.check(z.describe(described)));
}

/**
 * Binds a definition's types once: the registry holds kinds whose limits are
 * parsed by the kind itself, so no caller needs to know their shapes.
 */
export function defineKind<O extends object, S extends z.core.$ZodShape>(def: KindDefinition<O, S>) {
  const Common = z.object({ max: z.optional(z.number().check(z.int(), z.gte(1), z.lte(MAX_CAP))), target: z.optional(Target) });
  return {
    key: def.key,
    tool: def.tool,
    /** `true`, `{}` or a mapping of limits → the enabled kind, or a problem sentence. */
    enable(raw: unknown): { ok: true; kind: EnabledKind } | { ok: false; problem: string } {
      const value = raw === true || raw === null ? {} : raw;
      if (typeof value !== "object" || Array.isArray(value)) return { ok: false, problem: "must be true or a mapping of limits" };
      const { max, target, ...rest } = value as Record<string, unknown>;
      const common = Common.safeParse({ ...(max !== undefined ? { max } : {}), ...(target !== undefined ? { target } : {}) });
      if (!common.success) return { ok: false, problem: describeIssues(common.error) };
      if (common.data.target !== undefined && !def.targetArg) return { ok: false, problem: "takes no 'target'" };
      const options = def.options.safeParse(rest);
      if (!options.success) return { ok: false, problem: describeIssues(options.error) };
      const o = options.data;
      const problem = def.configProblem?.(o);
      if (problem) return { ok: false, problem };
      const limits: CommonLimits = { max: common.data.max ?? def.defaultMax, ...(common.data.target !== undefined ? { target: common.data.target } : {}) };
      const own = def.args(o, limits);
      const targetSchema = def.targetArg ? targetArgSchema(limits.target) : undefined;
      // Without a target argument the tool acts on the triggering issue/PR only: naming one is an unknown field.
      const args = z.catchall(targetSchema && def.targetArg ? z.extend(own, { [def.targetArg]: targetSchema }) : own, z.never());
      const kind: EnabledKind = {
        key: def.key,
        tool: def.tool,
        limits,
        targeted: def.targetArg !== undefined,
        description: def.description(o, limits),
        args,
        normalized: { ...rest, ...limits },
        check(input) {
          const parsed = args.safeParse(input);
          if (!parsed.success) return { ok: false, reason: describeIssues(parsed.error) };
          const a = parsed.data as z.output<z.ZodMiniObject<S>>;
          const refused = def.refine?.(a, o);
          if (refused) return { ok: false, reason: refused };
          const named = def.targetArg ? (parsed.data as Record<string, unknown>)[def.targetArg] : undefined;
          const requestedNumber = typeof named === "number" ? named : undefined;
          return {
            ok: true,
            request: {
              cost: def.cost?.(a, o) ?? 1,
              ...(requestedNumber !== undefined ? { requestedNumber } : {}),
              apply: (ctx, target) => def.apply(a, o, ctx, target),
            },
          };
        },
      };
      return { ok: true, kind };
    },
  };
}

export type SafeOutputKind = ReturnType<typeof defineKind>;

/** "Acts on …" for a tool description. */
export function targetText(target: Target | undefined, noun = "issue or pull request"): string {
  if (target === undefined) return `the ${noun} that triggered this run`;
  if (target === "*") return `any ${noun} of this repository (issue_number; default: the one that triggered this run)`;
  return `${noun} #${target}`;
}
