/**
 * The approval record: a hidden marker at the very start of the staging
 * comment. It is trusted only because of who wrote it: the comment's author
 * must be the action's own identity (findStaging, enact.ts), never a person,
 * who could paste a marker of their own. Agent text never comes first in
 * a comment, so the agent cannot plant one either.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { RESULTS_FILES } from "../../constants.js";
import * as z from "../../shared/zod.js";
import { defuseOurMarkers } from "../../shared/markers.js";

export const APPROVAL_STATES = ["staged", "enacting", "enacted", "rejected"] as const;
export type ApprovalState = (typeof APPROVAL_STATES)[number];

const Decision = z.object({ by: z.string(), at: z.string(), note: z.optional(z.string()) });

export const ApprovalRecord = z.object({
  v: z.literal(1),
  state: z.enum(APPROVAL_STATES),
  digest: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
  repository: z.string(),
  thread: z.number().check(z.int()),
  runId: z.string(),
  artifactId: z.number().check(z.int()),
  artifactName: z.string(),
  /** The workflow that staged it (workflowIdentity); another workflow's approve job never reads this record. */
  workflow: z.string(),
  stagedAt: z.string(),
  expiresAt: z.string(),
  /** Who triggered the run (may approve only with approval-self). */
  actor: z.optional(z.string()),
  decision: z.optional(Decision),
});
export type ApprovalRecord = z.infer<typeof ApprovalRecord>;

/**
 * `agent-runner run --approval required` (local.ts): the record in the results folder, the only
 * place it is kept. That folder is anyone's to edit, so nothing here is trusted on its own: the
 * digest the person types is recomputed from the folder's bytes (with `stagingId`, `workTree`
 * and `expiresAt` bound into it), and a second approval is refused by a ref in the working
 * tree's own repository, not by `state`.
 */
export const LocalApprovalRecord = z.object({
  v: z.literal(1),
  kind: z.literal("local"),
  state: z.enum(APPROVAL_STATES),
  digest: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
  /** A random id of this staging: two stagings of the same patch are two decisions. */
  stagingId: z.string().check(z.regex(/^[0-9a-f-]{36}$/)),
  /** The checkout (absolute path) the patch is applied to, and the commit it was made against. */
  workTree: z.string().check(z.minLength(1), z.maxLength(4096)),
  baseCommit: z.string().check(z.regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/)),
  stagedAt: z.string(),
  expiresAt: z.string(),
  /** What the safe-output policy says of each request, in file order (shown only: a local run applies none). */
  requestVerdicts: z.array(z.string().check(z.maxLength(2000))).check(z.maxLength(1000)),
  decision: z.optional(Decision),
});
export type LocalApprovalRecord = z.infer<typeof LocalApprovalRecord>;

export type AnyApprovalRecord = ApprovalRecord | LocalApprovalRecord;

const PREFIX = "<!-- agent-runner:approval:";
const SUFFIX = " -->";

/** The marker line: base64url JSON, so nothing in it can close the HTML comment. */
export function approvalMarker(record: ApprovalRecord): string {
  return `${PREFIX}${Buffer.from(JSON.stringify(record)).toString("base64url")}${SUFFIX}`;
}

/** The record at the start of `body`, or undefined (no marker there, or one that does not parse). */
export function readApprovalMarker(body: string): ApprovalRecord | undefined {
  if (!body.startsWith(PREFIX)) return undefined;
  const end = body.indexOf(SUFFIX, PREFIX.length);
  if (end < 0) return undefined;
  const encoded = body.slice(PREFIX.length, end);
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return undefined;
  try {
    const parsed = ApprovalRecord.safeParse(JSON.parse(Buffer.from(encoded, "base64url").toString("utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** `body` with its marker replaced by `record`'s (the rest of the comment kept). */
export function withRecord(body: string, record: ApprovalRecord): string {
  const end = body.indexOf(SUFFIX, PREFIX.length);
  return approvalMarker(record) + (body.startsWith(PREFIX) && end >= 0 ? body.slice(end + SUFFIX.length) : `\n${body}`);
}

/**
 * Agent text the action posts under its own name (a safe-output comment, issue or review) must not
 * begin like a staging comment: its approval marker is shown as text instead of hidden.
 */
export function defuseApprovalMarkers(markdown: string): string {
  return defuseOurMarkers(markdown);
}

/** The record in the results folder, for `agent-runner show` (never part of what was staged: the artifact was uploaded before). */
export async function saveRecord(resultsDir: string, record: AnyApprovalRecord): Promise<void> {
  await writeFile(path.join(resultsDir, RESULTS_FILES.approval), JSON.stringify(record, null, 2) + "\n");
}

/** The saved record (the action's or the CLI's), or undefined (none, or not one). */
export async function loadRecord(resultsDir: string): Promise<AnyApprovalRecord | undefined> {
  const text = await readFile(path.join(resultsDir, RESULTS_FILES.approval), "utf8").catch(() => undefined);
  return text === undefined ? undefined : parseRecord(text);
}

/** A record's text as either kind, or undefined. */
export function parseRecord(text: string): AnyApprovalRecord | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  const local = LocalApprovalRecord.safeParse(raw);
  if (local.success) return local.data;
  const parsed = ApprovalRecord.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

/** One line for `show`. */
export function recordLine(r: AnyApprovalRecord): string {
  const who = r.decision ? ` by ${"kind" in r ? "" : "@"}${r.decision.by} at ${r.decision.at}${r.decision.note ? ` (${r.decision.note})` : ""}` : "";
  if ("kind" in r) return `${r.state}${who}; digest ${r.digest}; staged ${r.stagedAt} locally for ${r.workTree} on ${r.baseCommit.slice(0, 12)}, expires ${r.expiresAt}`;
  return `${r.state}${who}; digest ${r.digest}; staged ${r.stagedAt} from run ${r.runId} (artifact '${r.artifactName}'), expires ${r.expiresAt}`;
}
