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
export async function saveRecord(resultsDir: string, record: ApprovalRecord): Promise<void> {
  await writeFile(path.join(resultsDir, RESULTS_FILES.approval), JSON.stringify(record, null, 2) + "\n");
}

/** The saved record, or undefined (none, or not one). */
export async function loadRecord(resultsDir: string): Promise<ApprovalRecord | undefined> {
  const text = await readFile(path.join(resultsDir, RESULTS_FILES.approval), "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const parsed = ApprovalRecord.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** One line for `show`. */
export function recordLine(r: ApprovalRecord): string {
  const who = r.decision ? ` by @${r.decision.by} at ${r.decision.at}${r.decision.note ? ` (${r.decision.note})` : ""}` : "";
  return `${r.state}${who}; digest ${r.digest}; staged ${r.stagedAt} from run ${r.runId} (artifact '${r.artifactName}'), expires ${r.expiresAt}`;
}
