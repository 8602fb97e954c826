/**
 * What `agent-runner run --approval required` prints (the staged summary)
 * and what `agent-runner approve` and `reject` print. Every value comes from
 * the results folder, which is hostile: the caller writes these lines through
 * the terminal door (cli/terminal.ts); JSON goes through terminalJson.
 */
import os from "node:os";
import path from "node:path";
import { RESULTS_FILES } from "../constants.js";
import { DIGEST_PREFIX_LENGTH } from "../publish/approval/digest.js";
import type { Approved, StagedFolder } from "../publish/approval/local.js";
import { PLAN_WORDS } from "../publish/approval/stage.js";

export interface StagedRequest {
  line: number;
  type?: string;
  args?: Record<string, unknown>;
  error?: string;
  /** What the safe-output policy says of it (at staging). */
  verdict?: string;
}

/** The staged summary, for `--json` and for the lines below. */
export interface StagedView {
  state: string;
  digest: string;
  delivery: { mode: "working-tree"; workTree: string; baseCommit: string };
  changedFiles: string[];
  patch: { path: string; bytes: number };
  requests: StagedRequest[];
  requestProblems: string[];
  stagedAt: string;
  expiresAt: string;
  approve: string;
  reject: string;
}

export function stagedView(staged: StagedFolder): StagedView {
  const { record } = staged;
  const short = staged.digest.slice(0, DIGEST_PREFIX_LENGTH);
  return {
    state: record.state,
    digest: staged.digest,
    delivery: { mode: "working-tree", workTree: record.workTree, baseCommit: record.baseCommit },
    changedFiles: staged.result.diff.changedFiles,
    patch: { path: path.join(staged.dir, RESULTS_FILES.patch), bytes: staged.patchBytes },
    requests: staged.requests.requests.map((r, i) => {
      const verdict = record.requestVerdicts[i];
      const base = { line: r.line, ...(verdict ? { verdict } : {}) };
      if ("error" in r) return { ...base, error: r.error };
      const { type, ...args } = r.value;
      return { ...base, type: String(type), args };
    }),
    requestProblems: staged.requests.problems,
    stagedAt: record.stagedAt,
    expiresAt: record.expiresAt,
    approve: `agent-runner approve ${shellWord(staged.dir)} ${short}`,
    reject: `agent-runner reject ${shellWord(staged.dir)}`,
  };
}

const MAX_FILES_SHOWN = 50;
const MAX_ARGS_SHOWN = 300;

/** The staged summary as terminal lines (one value per line; the caller's door escapes what the folder held). */
export function stagedLines(v: StagedView): string[] {
  const files = v.changedFiles;
  return [
    `staged for approval: nothing was applied to ${v.delivery.workTree}`,
    `  delivery:      ${PLAN_WORDS["working-tree"]} ${v.delivery.workTree}, on ${v.delivery.baseCommit.slice(0, 12)}`,
    `  files changed: ${files.length ? `${files.length}: ${files.slice(0, MAX_FILES_SHOWN).join(", ")}${files.length > MAX_FILES_SHOWN ? `, … and ${files.length - MAX_FILES_SHOWN} more` : ""}` : "none"}`,
    `  patch:         ${v.patch.path} (${v.patch.bytes} bytes)`,
    ...(v.requests.length || v.requestProblems.length
      ? [
          `  safe-output requests: ${v.requests.length}`,
          ...v.requests.map((r) => `    line ${r.line}: ${r.error !== undefined ? `unreadable (${r.error})` : `${r.type} ${clip(JSON.stringify(r.args), MAX_ARGS_SHOWN)}`}${r.verdict ? ` — ${r.verdict}` : ""}`),
          ...v.requestProblems.map((p) => `    ${p}`),
        ]
      : ["  safe-output requests: none"]),
    `  digest:        ${v.digest}`,
    `  expires:       ${v.expiresAt}`,
    `approve it:      ${v.approve}`,
    `or drop it:      ${v.reject}`,
  ];
}

export function approvedLines(a: Approved, dir: string): string[] {
  const d = a.record.decision;
  return [
    `approved: digest ${a.record.digest} applied to ${a.workTree} (${a.files.length} file(s): ${a.files.slice(0, MAX_FILES_SHOWN).join(", ") || "none"}), not committed`,
    ...(a.movedTo ? [`note: HEAD moved from the staged base ${a.record.baseCommit.slice(0, 12)} to ${a.movedTo.slice(0, 12)}; the patch applied cleanly to it`] : []),
    `recorded: by ${d?.by ?? "?"} at ${d?.at ?? "?"} in ${path.join(dir, RESULTS_FILES.approval)}`,
  ];
}

/** Who decides, as the record names them: the local user. */
export function localUser(): string {
  try {
    return os.userInfo().username || "unknown";
  } catch {
    return "unknown";
  }
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** `value` as one shell word: as it is when plain, else single-quoted. */
function shellWord(value: string): string {
  return /^[A-Za-z0-9_/.:@%+=,-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
