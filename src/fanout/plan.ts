/**
 * `phase: plan`: the items one workflow run fans out over, as JSON for
 * `strategy.matrix`. GitHub's own engine (a matrix job per item,
 * `max-parallel`, retries, logs) does the rest.
 *
 * Sources: a search query (REST search API: one request per 100 items kept),
 * a JSON list of numbers, or a list of repositories. The plan says how many
 * matched and how many it kept (`max-items`).
 */
import * as z from "../shared/zod.js";
import { ConfigurationError } from "../errors.js";
import type { GitHubApi } from "../github/api.js";
import { apiErrorMessage } from "../github/client.js";
import type { Logger } from "../logger.js";
import { ownerOf, parseRepository } from "../shared/item-ref.js";
import type { RepoRef } from "../shared/trigger.js";
import type { PlanSource } from "./inputs.js";
import { dedupe, itemsFromList, itemsFromRepositories, makeItem, type FanOutItem } from "./items.js";

export interface Plan {
  items: FanOutItem[];
  /** How many the source named (a search's total count). */
  matched: number;
  /** What the source was, for the log and summary. */
  source: string;
  /** GitHub's search timed out and said its results may be incomplete. */
  incomplete?: boolean;
  /** Items of other owners than the workflow's, left out (`allow-foreign-items` not set). */
  dropped: FanOutItem[];
}

/**
 * Which items a plan may keep, judged by each item's own repository (never
 * by the query's text): those of the workflow's owner, or any with
 * `allow-foreign-items`.
 */
export interface ItemScope {
  /** The workflow's owner (user or organization), lower-cased. */
  owner: string;
  allowForeign: boolean;
}

function inScope(item: FanOutItem, scope: ItemScope): boolean {
  return scope.allowForeign || item["repository-owner"].toLowerCase() === scope.owner;
}

/** GitHub returns at most the first 1,000 results of a search. */
const SEARCH_RESULT_LIMIT = 1000;

// One page of GET /search/issues, validated: it comes from the network. Only what the plan uses.
const SearchPage = z.object({
  total_count: z.number().check(z.int(), z.nonnegative()),
  incomplete_results: z.optional(z.boolean()),
  items: z.array(
    z.object({
      number: z.number().check(z.int(), z.positive()),
      repository_url: z.string(),
      pull_request: z.nullish(z.looseObject({})),
    }),
  ),
});

/** `https://api.github.com/repos/owner/name` → owner/name. */
function repositoryOfUrl(url: string): RepoRef | undefined {
  const m = /\/repos\/([^/]+\/[^/]+)\/?$/.exec(url);
  return m ? parseRepository(decodeURIComponent(m[1]!)) : undefined;
}

/**
 * A query names its own scope with `repo:`, `org:` or `user:`; otherwise it
 * searches `repository`. A negated qualifier (`-repo:x`) only narrows: it is
 * no scope. (What is kept is still judged item by item: ItemScope.)
 */
export function scopedQuery(query: string, repository: RepoRef): string {
  return /(^|\s)(repo|org|user|owner):\S/i.test(query) ? query.trim() : `${query.trim()} repo:${repository.fullName}`;
}

async function searchItems(api: GitHubApi, query: string, max: number, thisRepository: string | undefined, scope: ItemScope, log: Logger): Promise<Omit<Plan, "source">> {
  const perPage = Math.min(100, max);
  const items: FanOutItem[] = [];
  const dropped: FanOutItem[] = [];
  let matched = 0;
  let incomplete = false;
  for (let page = 1; items.length < max && (page - 1) * perPage < SEARCH_RESULT_LIMIT; page++) {
    let data: unknown;
    try {
      data = await api.searchIssues(query, page, perPage);
    } catch (e) {
      const status = (e as { status?: number }).status;
      if (status === 422)
        throw new ConfigurationError(`Input 'items-query': GitHub's search refused '${query}': ${apiErrorMessage(e)}. Check the qualifiers (see "Searching issues and pull requests" in GitHub's docs).`);
      throw new ConfigurationError(`Input 'items-query': the search API failed: ${apiErrorMessage(e)}`);
    }
    const parsed = SearchPage.safeParse(data);
    if (!parsed.success) throw new ConfigurationError(`Input 'items-query': the search API answered with something that is not a search result (${parsed.error.issues[0]?.message ?? "bad shape"}).`);
    matched = parsed.data.total_count;
    incomplete ||= parsed.data.incomplete_results === true;
    for (const hit of parsed.data.items) {
      const repo = repositoryOfUrl(hit.repository_url);
      if (!repo) {
        log.warning(`Plan: a search result names no repository (${hit.repository_url.slice(0, 200)}); left out.`);
        continue;
      }
      const item = makeItem(repo, hit.number, thisRepository);
      (inScope(item, scope) ? items : dropped).push(item);
    }
    if (parsed.data.items.length < perPage) break;
  }
  return { items: dedupe(items).slice(0, max), matched, dropped, ...(incomplete ? { incomplete } : {}) };
}

export async function planItems(o: {
  source: PlanSource;
  maxItems: number;
  repository: RepoRef;
  thisRepository: string | undefined;
  allowForeign: boolean;
  api: () => Promise<GitHubApi>;
  log: Logger;
}): Promise<Plan> {
  const { source, maxItems, repository, thisRepository } = o;
  // The workflow's owner; outside Actions (no GITHUB_REPOSITORY) the owner of `repository`.
  const scope: ItemScope = { owner: ownerOf(thisRepository) ?? repository.owner.toLowerCase(), allowForeign: o.allowForeign };
  if (source.kind === "query") {
    const query = scopedQuery(source.query, repository);
    const found = await searchItems(await o.api(), query, maxItems, thisRepository, scope, o.log);
    return { ...found, source: `the search '${query}'` };
  }
  const all = source.kind === "items" ? itemsFromList(source.text, repository, thisRepository) : itemsFromRepositories(source.text, thisRepository);
  const kept = all.filter((i) => inScope(i, scope));
  return {
    items: kept.slice(0, maxItems),
    matched: all.length,
    dropped: all.filter((i) => !inScope(i, scope)),
    source: source.kind === "items" ? "'items'" : "'repositories'",
  };
}

/** The warning for items of other owners left out; undefined when none was. */
export function droppedLine(plan: Plan, owner: string): string | undefined {
  const n = plan.dropped.length;
  if (!n) return undefined;
  const shown = plan.dropped.slice(0, DROPPED_SHOWN).map((i) => i.item);
  const more = n > shown.length ? ` and ${n - shown.length} more` : "";
  return `Plan: left out ${n} item${n === 1 ? "" : "s"} of other owners than ${owner}: ${shown.join(", ")}${more}. Set 'allow-foreign-items: true' to plan them.`;
}

/** How many left-out items the warning and the summary name. */
const DROPPED_SHOWN = 20;

/** `{include: [...]}`: what `strategy.matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}` takes. */
export function matrixJson(plan: Plan): string {
  return JSON.stringify({ include: plan.items });
}

export function planLine(plan: Plan, maxItems: number): string {
  const kept = plan.items.length;
  const cut = kept < plan.matched ? `; kept the first ${kept} (max-items: ${maxItems})` : `; kept all ${kept}`;
  return `Plan: ${plan.matched} item${plan.matched === 1 ? "" : "s"} matched ${plan.source}${cut}.${plan.incomplete ? " GitHub's search timed out: its results may be incomplete." : ""}`;
}

/** The job summary: counts and the items kept (names and numbers only, never titles). */
export function planSummary(plan: Plan, maxItems: number): string {
  const lines = ["### Agent Runner plan", "", planLine(plan, maxItems), ""];
  if (plan.items.length) {
    lines.push("| # | item | key |", "|---|---|---|");
    plan.items.forEach((i, n) => lines.push(`| ${n + 1} | ${i.item} | \`${i.key}\` |`));
    lines.push("");
  }
  if (plan.dropped.length) {
    lines.push(`Left out (other owners; \`allow-foreign-items\` is not \`true\`): ${plan.dropped.length}`, "");
    for (const i of plan.dropped.slice(0, DROPPED_SHOWN)) lines.push(`- ${i.item}`);
    if (plan.dropped.length > DROPPED_SHOWN) lines.push(`- and ${plan.dropped.length - DROPPED_SHOWN} more`);
    lines.push("");
  }
  return lines.join("\n");
}
