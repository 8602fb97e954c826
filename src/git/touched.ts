/**
 * Workspaces an agent has already run in during this job.
 *
 * host-repo.ts trusts the workspace's repository until the agent starts. A
 * second agent step in the same job (`session: <id from step 1>`) breaks
 * that: step 1's agent could have left `commondir`, `config.worktree` or
 * attributes behind, and the host's pre-agent git in step 2 would follow
 * them. So the runner records each workspace before its agent starts, in a
 * file under RUNNER_TEMP (per job, hidden from the sandbox; the local CLI
 * gives each invocation a RUNNER_TEMP of its own, src/cli.ts), together with
 * the repository paths resolved while they were still trusted. A later step
 * that finds its workspace there treats the repository as hostile from the start.
 */
import { createHash } from "node:crypto";
import { appendFile, mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import * as z from "../shared/zod.js";
import { isSameOrUnder, realOrResolved } from "../shared/paths.js";

const Record = z.object({
  workTree: z.string(),
  gitDir: z.string(),
  commonDir: z.string(),
  config: z.optional(z.string()),
  /** The repository the config file's folder was a checkout of, read before the agent started (config/provenance.ts). */
  checkout: z.optional(z.string()),
  /**
   * The ignored-files snapshot (git/clean-copy.ts) made before this agent started, for
   * `verify-command`: a later step's checks use the first agent's, never the workspace's then.
   */
  verifyIgnored: z.optional(z.object({ dir: z.string(), entries: z.number() })),
});
export type TouchedRepo = z.infer<typeof Record>;

export class TouchedWorkspaces {
  private constructor(
    private readonly file: string,
    /** Fingerprint of the step's config file as this step read it (configFingerprint). */
    private readonly config?: string,
    /** The repository the config file's folder was a checkout of, as this step read it. */
    private readonly checkout?: string,
  ) {}

  /** The registry of this job: one file under the runner's temp folder. */
  static forJob(runnerTemp: string, config?: string, checkout?: string): TouchedWorkspaces {
    return new TouchedWorkspaces(path.join(runnerTemp, "agent-runner", "agent-touched.jsonl"), config, checkout);
  }

  /** Called before an agent starts in `repo`; `verifyIgnored`: the ignored files kept for its checks, if any. */
  async mark(repo: Pick<TouchedRepo, "workTree" | "gitDir" | "commonDir">, verifyIgnored?: TouchedRepo["verifyIgnored"]): Promise<void> {
    await mkdir(path.dirname(this.file), { recursive: true });
    const record: TouchedRepo = {
      workTree: repo.workTree,
      gitDir: repo.gitDir,
      commonDir: repo.commonDir,
      ...(this.config !== undefined ? { config: this.config } : {}),
      ...(this.checkout !== undefined ? { checkout: this.checkout } : {}),
      ...(verifyIgnored ? { verifyIgnored } : {}),
    };
    await appendFile(this.file, JSON.stringify(record) + "\n");
  }

  /** The repository an earlier agent of this job ran in that holds `dir`, if any: the first agent's record. */
  async lookup(dir: string): Promise<TouchedRepo | undefined> {
    const text = await readFile(this.file, "utf8").catch(() => "");
    const real = realOrResolved(dir);
    for (const line of text.split("\n")) {
      const parsed = line ? Record.safeParse(safeJson(line)) : undefined;
      if (parsed?.success && (isSameOrUnder(real, parsed.data.workTree) || isSameOrUnder(parsed.data.workTree, real))) return parsed.data;
    }
    return undefined;
  }
}

function safeJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/**
 * The config file as bytes seen now ("absent" when there is none). A later
 * step compares it with what the earlier step read before its agent started:
 * settings such as `sandbox` or `network` must never come from a file an agent wrote.
 */
export async function configFingerprint(file: string): Promise<string> {
  return fingerprintOf(await readFile(file).catch(() => undefined));
}

/** configFingerprint of bytes already read (undefined: there is no file). */
export function fingerprintOf(bytes: Buffer | undefined): string {
  return bytes ? createHash("sha256").update(bytes).digest("hex") : "absent";
}
