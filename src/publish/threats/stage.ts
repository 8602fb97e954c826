/**
 * Threat detection, before anything is published (phase all after the
 * agent, or phase publish): the patch's added lines (a symlink's target is
 * its one added line) and the names of the files it leaves, every safe-output
 * request, the final message and the structured output are scanned for secrets, and the changed
 * paths are matched against the protected list. A secret holds everything
 * back; a protected path is delivered only as a draft pull request
 * (`review`), refused (`block`) or let through (`allow`).
 */
import type { RunResult } from "../../result.js";
import type { StageContext } from "../../stage-context.js";
import { readBlob } from "../../git/blobs.js";
import { codeName } from "../markdown-code.js";
import type { CheckedPatch } from "../patch-stage.js";
import { safeOutputsFile } from "../safe-outputs/stage.js";
import { readRequests, type RequestsFile } from "../safe-outputs/requests.js";
import { FILE_NAME, patchPieces } from "../../shared/patch-pieces.js";
import { protectedChanges, protectedInTree, protectedPaths, type ProtectedChange } from "./protected-files.js";
import type { ScanTarget } from "./secret-scan.js";
import type { ThreatFinding } from "./types.js";
import { detectionLine, judgedContent, verdictFindings } from "./detection.js";

export interface ThreatReport {
  findings: ThreatFinding[];
  /** A finding holds the patch, the safe outputs and the final message back; the step fails with `message`. */
  held: boolean;
  /** `protected-files: review`: the protected paths the draft pull request names. */
  review: string[];
  message?: string;
  /** `threat-detection: agent`: one line on what the detection agent said, for the job summary. */
  detection?: string;
  /** Changed paths whose name holds a secret: masked in what a held run still shows. */
  secretNames?: string[];
}

export async function detectThreats(
  ctx: StageContext,
  result: RunResult,
  postImage?: CheckedPatch["postImage"],
  /** The safe-output requests (read once by the caller, so that the scanned requests are the applied ones). */
  requests: () => Promise<RequestsFile> = () => readRequests(safeOutputsFile(ctx.resultsDir)),
): Promise<ThreatReport | undefined> {
  const { settings } = ctx;
  if (settings.delivery.threatDetection === "none" || settings.delivery.phase === "run") return undefined;
  const targets = [...(await patchPieces(result.diff.patchPath)), ...requestTargets(await requests()), { where: "final message", text: result.output }, ...structuredTarget(result)];
  const findings = await scanTexts(targets, (text) => ctx.redactor.holdsSecretValue(text));
  const secretNames = await namesHoldingSecrets(targets, findings);
  if (postImage) findings.push(...(await scanBinaryFiles(ctx, postImage)));
  // The patch was redacted when it was written: what the run's secrets were is known only by that.
  const named = result.diff.secretFiles ?? [];
  for (const file of named) findings.push({ kind: "run-secret", where: "patch", file, detail: "a secret value of this run or a token (redacted from the patch)" });
  if (result.diff.secretsRedacted && !named.length) findings.push({ kind: "run-secret", where: "patch", detail: "a secret value of this run or a token (redacted from the patch)" });
  let detection: string | undefined;
  if (settings.delivery.threatDetection === "agent") {
    const judged = await judgedContent(ctx.resultsDir, result);
    const cleanReason = async (text: string) => (await scanTexts([{ where: "detection agent", text }], (t) => ctx.redactor.holdsSecretValue(t))).length === 0;
    const verdict = await verdictFindings(ctx.resultsDir, judged, { failOpen: settings.delivery.detectionFailOpen, cleanReason });
    findings.push(...verdict.findings);
    for (const w of verdict.warnings) ctx.log.warning(w);
    if (verdict.record?.status === "verdict" && !verdict.findings.length) ctx.log.info("Threat detection: the detection agent found no threat.");
    detection = detectionLine(verdict.record, verdict.warnings.length > 0);
  }
  const mode = settings.delivery.protectedFiles;
  const touched = mode === "allow" ? [] : await protectedTouched(ctx, result, postImage);
  // A link hides which protected file changes from the diff (and from CODEOWNERS): not something to ask a reviewer about.
  const linked = mode === "review" && touched.some((t) => t.linked);
  if (mode === "block" || linked)
    findings.push(
      ...touched.map((t): ThreatFinding => ({
        kind: "protected-file",
        where: "patch",
        file: t.file,
        detail: `${t.detail} (${mode === "block" ? "`protected-files: block`" : "held under `protected-files: review`: protected files changed through links or submodules"})`,
      })),
    );
  for (const f of findings) ctx.log.error(`Threat detection: ${describe(f)}.`);
  const review = mode === "review" && findings.length === 0 ? touched.map((t) => t.file) : [];
  if (review.length) ctx.log.warning(`Protected files changed (${review.join(", ")}): delivered only as a draft pull request for a human review.`);
  const held = findings.length > 0;
  return {
    findings,
    held,
    review,
    ...(secretNames.length ? { secretNames } : {}),
    ...(detection ? { detection } : {}),
    ...(held ? { message: `Threat detection held this run back: ${findings.length} finding(s) (${brief(findings)}). Nothing was pushed or posted but this report.` } : {}),
  };
}

/**
 * The changed paths that are protected: judged on the tree the patch makes,
 * links and submodules included, when the patch was checked; by their own
 * names otherwise (no delivery, so no tree was made).
 */
async function protectedTouched(ctx: StageContext, result: RunResult, postImage: CheckedPatch["postImage"]): Promise<ProtectedChange[]> {
  const rules = protectedPaths(ctx.settings.delivery.protectedPaths);
  if (postImage) return protectedInTree(postImage.git, postImage, result.diff.changedFiles, rules, ctx.runDir);
  return protectedChanges(result.diff.changedFiles, rules).map((file) => ({ file, detail: "a protected file", linked: false }));
}

/** Read per binary file: far above real assets, and the patch itself is at most 50 MB. */
const MAX_BINARY_BYTES = 64 * 1024 * 1024;
/** Printable runs this long or longer are what a secret in a binary file looks like. */
const PRINTABLE_RUNS = /[\t\n\r\x20-\x7e]{8,}/g;

/**
 * Binary files as the commit will hold them, read from the repository the
 * patch was checked in (a binary patch's text is compressed: no secret shows
 * in it): the run's secret values and known tokens in their bytes, the
 * recommended rules over their printable runs.
 */
async function scanBinaryFiles(ctx: StageContext, postImage: NonNullable<CheckedPatch["postImage"]>): Promise<ThreatFinding[]> {
  const findings: ThreatFinding[] = [];
  for (const file of postImage.binaryFiles) {
    const blob = await readBlob(postImage.git, postImage.tree, file, ctx.runDir, MAX_BINARY_BYTES);
    if (!blob) continue;
    if (blob.truncated) ctx.log.warning(`Threat detection: only the first ${MAX_BINARY_BYTES / 1024 / 1024} MB of the binary file ${file} were scanned.`);
    const latin1 = blob.bytes.toString("latin1");
    if (ctx.redactor.maskLatin1(latin1) !== latin1) findings.push({ kind: "run-secret", where: "patch", file, detail: "a secret value of this run or a token, in a binary file" });
    const text = latin1.match(PRINTABLE_RUNS)?.join("\n") ?? "";
    if (text) findings.push(...(await scanTexts([{ where: "patch", file, text }], () => false)).map((f) => ({ ...f, detail: `${f.detail} (in a binary file)` })));
  }
  return findings;
}

/**
 * The secret scan of the texts that hold something. The rules are loaded and compiled only then: a
 * run that changed nothing and said nothing does not pay for them.
 */
async function scanTexts(targets: ScanTarget[], isRunSecret: (text: string) => boolean): Promise<ThreatFinding[]> {
  const texts = targets.filter((t) => t.text.length > 0);
  return texts.length ? (await import("./secret-scan.js")).scanForSecrets(texts, isRunSecret) : [];
}

/** The changed paths whose own name a finding is about (a token as a file name). */
async function namesHoldingSecrets(targets: readonly ScanTarget[], findings: readonly ThreatFinding[]): Promise<string[]> {
  if (!findings.some((f) => f.where === FILE_NAME)) return [];
  const { maskedName } = await import("./secret-scan.js");
  return targets.filter((t) => t.where === FILE_NAME && maskedName(t.text) !== t.text).map((t) => t.text);
}

/** `structured-output` goes to later steps that often post it: scanned like the final message. */
function structuredTarget(result: RunResult): ScanTarget[] {
  return result.structuredOutput === undefined ? [] : [{ where: "structured output", text: strings(result.structuredOutput).join("\n") }];
}

/** Each safe-output request as one text: every string in it, whatever the field. */
function requestTargets(file: RequestsFile): ScanTarget[] {
  return file.requests.flatMap((r) => {
    if (!("value" in r)) return [];
    const type = typeof r.value.type === "string" ? r.value.type : "request";
    return [{ where: `safe output on line ${r.line} (${type.slice(0, 40)})`, text: strings(r.value).join("\n") }];
  });
}

function strings(value: unknown, depth = 0): string[] {
  if (typeof value === "string") return [value];
  if (depth > 8 || typeof value !== "object" || value === null) return [];
  return Object.values(value).flatMap((v) => strings(v, depth + 1));
}

function describe(f: ThreatFinding): string {
  return `${f.kind} in ${f.where}${f.file !== undefined ? ` (${f.file})` : ""}: ${f.detail}`;
}

/** Kinds and places only: a verdict's reasons are the detector's words, for the job summary and outputs. */
function brief(findings: readonly ThreatFinding[]): string {
  const items = findings.map((f) => `${f.kind === "threat-verdict" ? `${f.detail.split(":")[0]} (detection agent)` : f.kind === "detection-failed" ? "the detection agent failed" : `${f.kind} in ${f.where}`}${f.file !== undefined ? ` ${codeName(f.file)}` : ""}`);
  const unique = [...new Set(items)];
  return unique.slice(0, 10).join(", ") + (unique.length > 10 ? ", …" : "");
}

/** For the comment and the job summary: agent-chosen names as code, never the value. */
export function threatMarkdown(report: ThreatReport): string {
  const lines = ["### Threat detection", ""];
  for (const f of report.findings) lines.push(`- **${f.kind}** in ${f.where}${f.file !== undefined ? ` ${codeName(f.file)}` : ""}: ${codeName(f.detail)}`);
  if (report.detection) lines.push(`- ${report.detection}`);
  if (report.review.length) lines.push(`- Protected files changed, delivered as a draft pull request for review: ${report.review.map((f) => codeName(f)).join(", ")}`);
  return lines.join("\n") + "\n";
}

/**
 * What a held run may still show: no final message, no structured output, no
 * link to the artifact that holds the patch, and no changed path whose name
 * holds a secret (`changed-files`, the comment's file list) but masked.
 */
export function heldResult(result: RunResult, report?: ThreatReport): RunResult {
  const { structuredOutput: _dropped, ...rest } = result;
  const secretNames = new Set(report?.secretNames ?? []);
  const changedFiles = secretNames.size ? result.diff.changedFiles.map((f) => (secretNames.has(f) ? "(a file whose name holds a secret)" : f)) : result.diff.changedFiles;
  return { ...rest, diff: { ...rest.diff, changedFiles }, output: "", artifacts: [] };
}
