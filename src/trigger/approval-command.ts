/**
 * `/approve <digest>` and `/reject`: the only comments an `approval: required`
 * workflow reads as decisions. The comment's text is trusted for nothing but
 * the digest prefix; which run, which artifact and which bytes come from the
 * staging comment the action itself wrote (publish/approval/enact.ts).
 */
import type { GitHubEvent } from "./event.js";

export type ApprovalVerb = { kind: "approve"; digest: string } | { kind: "reject" };

export interface ApprovalCommand {
  verb: ApprovalVerb;
  /** `created`, or `edited` (refused: the text approved is not the text first posted). */
  action: string;
  repository: string;
  thread: number;
  commentId: number;
  commentUrl?: string;
  actor: { login: string; isBot: boolean; id?: number };
}

const APPROVE = /^\s*\/approve\s+([0-9a-fA-F]{6,64})\s*$/;
const APPROVE_ANY = /^\s*\/approve(?![\p{L}\p{N}_-])/u;
const REJECT = /^\s*\/reject(?![\p{L}\p{N}_-])/u;

/** The verb of a comment body: a well-formed `/approve <hex>`, `/reject`, or `/approve` with no usable digest (answered, not ignored). */
export function approvalVerb(body: string): ApprovalVerb | { kind: "malformed" } | undefined {
  const m = APPROVE.exec(body);
  if (m) return { kind: "approve", digest: m[1]!.toLowerCase() };
  if (APPROVE_ANY.test(body)) return { kind: "malformed" };
  if (REJECT.test(body)) return { kind: "reject" };
  return undefined;
}

/** An issue_comment event that is an approval command, or undefined (any other event runs as usual). */
export function approvalCommand(event: GitHubEvent): (Omit<ApprovalCommand, "verb"> & { verb: ApprovalVerb | { kind: "malformed" } }) | undefined {
  if (event.name !== "issue_comment") return undefined;
  const p = event.payload;
  const verb = approvalVerb(p.comment.body ?? "");
  const repository = p.repository?.full_name;
  if (!verb || !repository) return undefined;
  const login = p.comment.user.login;
  return {
    verb,
    action: p.action,
    repository,
    thread: p.issue.number,
    commentId: p.comment.id,
    ...(p.comment.html_url ? { commentUrl: p.comment.html_url } : {}),
    actor: { login, isBot: p.comment.user.type === "Bot" || /\[bot\]$/i.test(login), ...(p.comment.user.id !== undefined ? { id: p.comment.user.id } : {}) },
  };
}
