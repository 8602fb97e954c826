/**
 * Fan-out items: one issue, pull request or repository each, as the plan
 * lists them and the matrix carries them. An item's `key` names its
 * artifacts (trigger/item.ts itemKey), which is how gather finds its row.
 *
 * The matrix holds only what is safe to expand anywhere in a workflow:
 * numbers and `owner/repo` names (GitHub's characters), never a title or a
 * body, which anyone can write.
 */
import { parseYaml } from "../shared/yaml.js";
import * as z from "../shared/zod.js";
import { ConfigurationError } from "../errors.js";
import { itemKey, itemRef, parseRepository } from "../shared/item-ref.js";
import type { RepoRef } from "../shared/trigger.js";

/** GitHub's limit of jobs one matrix may generate. */
export const MATRIX_LIMIT = 256;

export interface FanOutItem {
  /** `owner/repo#12`, or `owner/repo` for a repository item. */
  item: string;
  key: string;
  repository: string;
  "repository-owner": string;
  "repository-name": string;
  "issue-number"?: number;
}

export function makeItem(repo: RepoRef, number: number | undefined, thisRepository: string | undefined): FanOutItem {
  return {
    item: itemRef(repo, number),
    key: itemKey(repo, number, thisRepository),
    repository: repo.fullName,
    "repository-owner": repo.owner,
    "repository-name": repo.name,
    ...(number !== undefined ? { "issue-number": number } : {}),
  };
}

/** `12`, `#12`, `owner/repo#12`. */
const REF = /^(?:([^#\s]+\/[^#\s]+))?#?(\d{1,10})$/;

/** One entry of the `items` input: a number (of `repository`) or `owner/repo#n`; undefined when it is neither. */
export function parseItemRef(entry: unknown, repository: RepoRef, thisRepository: string | undefined): FanOutItem | undefined {
  if (typeof entry === "number") return Number.isInteger(entry) && entry > 0 && entry <= 2 ** 31 ? makeItem(repository, entry, thisRepository) : undefined;
  if (typeof entry !== "string") return undefined;
  const m = REF.exec(entry.trim());
  if (!m) return undefined;
  const repo = m[1] ? parseRepository(m[1]) : repository;
  const n = Number(m[2]);
  if (!repo || n <= 0 || n > 2 ** 31) return undefined;
  return makeItem(repo, n, thisRepository);
}

/**
 * The same item named twice (12 and owner/repo#12) is one item. Two different
 * items whose keys coincide (`a-b/c#1` and `a/b-c#1` are both `a-b-c-1`) would
 * share artifact and session names, so that is an error, not a merge.
 */
export function dedupe(items: FanOutItem[]): FanOutItem[] {
  const byKey = new Map<string, string>();
  return items.filter((i) => {
    const key = i.key.toLowerCase();
    const ref = i.item.toLowerCase();
    const earlier = byKey.get(key);
    if (earlier === ref) return false;
    if (earlier !== undefined)
      throw new ConfigurationError(
        `Input 'items': '${i.item}' and '${earlier}' would share the artifact and session names '${i.key}'; plan them in separate fan-out runs.`,
      );
    byKey.set(key, ref);
    return true;
  });
}

function parseJsonOrYaml(input: string, text: string): unknown {
  try {
    return parseYaml(text);
  } catch (e) {
    throw new ConfigurationError(`Input '${input}': is not valid JSON: ${(e as Error).message.split("\n")[0]}`);
  }
}

/** The `items` input of `phase: plan`: a JSON array of numbers or `owner/repo#n`. */
export function itemsFromList(text: string, repository: RepoRef, thisRepository: string | undefined): FanOutItem[] {
  const doc = parseJsonOrYaml("items", text);
  if (!Array.isArray(doc)) throw new ConfigurationError(`Input 'items': must be a JSON array of issue/pull request numbers or 'owner/repo#n', like [12, "octo/other#7"].`);
  const items: FanOutItem[] = [];
  const bad: string[] = [];
  for (const entry of doc) {
    const item = parseItemRef(entry, repository, thisRepository);
    if (item) items.push(item);
    else bad.push(JSON.stringify(entry).slice(0, 60));
  }
  if (bad.length) throw new ConfigurationError(`Input 'items': ${bad.slice(0, 5).join(", ")} ${bad.length === 1 ? "is" : "are"} not an issue/pull request number or 'owner/repo#n'.`);
  return dedupe(items);
}

/** The `repositories` input: newline- (or comma-) separated `owner/repo`; `#` starts a comment. */
export function itemsFromRepositories(text: string, thisRepository: string | undefined): FanOutItem[] {
  const names = text
    .split(/[\n,]/)
    .map((l) => l.replace(/(^|\s)#.*$/, "").trim())
    .filter(Boolean);
  const bad = names.filter((n) => !parseRepository(n));
  if (bad.length) throw new ConfigurationError(`Input 'repositories': ${bad.slice(0, 5).map((b) => `'${b.slice(0, 140)}'`).join(", ")} ${bad.length === 1 ? "is" : "are"} not owner/repo.`);
  return dedupe(names.map((n) => makeItem(parseRepository(n)!, undefined, thisRepository)));
}

const MatrixEntry = z.object({ item: z.string(), key: z.optional(z.string()) });
const Matrix = z.object({ include: z.array(MatrixEntry) });

/**
 * What gather expects (its `items` input): the plan's `matrix` output as it
 * is, or a plain `items` array. Items that left no artifact show as missing.
 */
export function expectedItems(text: string, repository: RepoRef, thisRepository: string | undefined): FanOutItem[] {
  const doc = parseJsonOrYaml("items", text);
  const matrix = Matrix.safeParse(doc);
  if (!matrix.success) return itemsFromList(text, repository, thisRepository);
  const items: FanOutItem[] = [];
  for (const e of matrix.data.include) {
    const repo = parseRepository(e.item);
    const item = repo ? makeItem(repo, undefined, thisRepository) : parseItemRef(e.item, repository, thisRepository);
    if (!item) throw new ConfigurationError(`Input 'items': the matrix entry '${e.item.slice(0, 80)}' is not 'owner/repo#n' or 'owner/repo'; pass the plan's 'matrix' output unchanged.`);
    items.push(item);
  }
  return dedupe(items);
}
