/**
 * One `verify-command` run on exactly what would be delivered: the tree the
 * patch makes, in a fresh folder (git/clean-copy.ts) with the ignored files
 * (dependencies) as they were before the agent started, a fresh empty HOME
 * and TMPDIR, in a sandbox of its own with the run's network policy, the
 * agent's allowlisted environment and never a model key.
 *
 * Why not the agent's workspace: the agent controls everything there that
 * the patch does not show (an ignored `node_modules/.bin` shim, an `.npmrc`
 * in its HOME saying `script-shell=/bin/true`), so a check run there can pass
 * a change that fails on the delivered tree. Each check makes the copy again
 * from the work tree as the agent has just left it, so fix rounds still work
 * in the agent's own workspace and session.
 */
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import type { InstalledAgent } from "../agents/types.js";
import type { Settings } from "../config/schema.js";
import { materialiseCheckCopy, type IgnoredSnapshot } from "../git/clean-copy.js";
import type { HostRepo } from "../git/host-repo.js";
import { treeForCheck, type Baseline } from "../git/snapshot.js";
import type { Logger } from "../logger.js";
import { buildAgentEnv } from "../sandbox/env.js";
import type { PreparedSandbox, SandboxBackend, SandboxLayout, SpawnSpec } from "../sandbox/types.js";

/** What the checks are made from, recorded before the agent started. */
export interface CheckSource {
  repo: HostRepo;
  baseline: Baseline;
  /** The ignored files as they were before the agent started (before the job's first agent, with `earlierAgent`); absent when there were none to keep. */
  ignored: IgnoredSnapshot | undefined;
  sandboxBackend: SandboxBackend;
  /**
   * An agent already ran in this repository earlier in this job: paths that differed from the base commit at
   * start are checked as the base commit has them (that agent may have written them; the patch never carries them).
   */
  earlierAgent?: boolean;
}

export interface CleanCheckRequest {
  settings: Settings;
  source: CheckSource;
  installed: InstalledAgent;
  runId: string;
  /** The run's private scratch folder (hidden from every sandbox). */
  scratchDir: string;
  credentialFiles: string[] | undefined;
  log: Logger;
}

export interface PreparedCheck {
  spec: SpawnSpec;
  sandbox: PreparedSandbox;
  /** One line for the log: what the copy holds. */
  described: string;
  /** Sandbox torn down, copy removed. */
  cleanup(): Promise<void>;
}

/** The folder every check's copy, HOME and TMPDIR are made in (emptied before and after each check). */
export function checkDir(scratchDir: string): string {
  return path.join(scratchDir, "verify-check");
}

/** Makes the copy and the sandbox for one check; on failure nothing is left behind. */
export async function prepareCleanCheck(req: CleanCheckRequest): Promise<PreparedCheck> {
  const { settings, source, log } = req;
  const { repo, baseline } = source;
  const dir = checkDir(req.scratchDir);
  await rm(dir, { recursive: true, force: true });
  let sandbox: PreparedSandbox | undefined;
  try {
    const started = Date.now();
    // The copy keeps the checkout's folder name and the working directory's place in it (tools print and read paths).
    const workTree = path.join(dir, "repo", path.basename(repo.workspace.workTree));
    const workspace = path.join(workTree, repo.workspace.pathspec);
    const layout: SandboxLayout = {
      workspace,
      home: path.join(dir, "home"),
      tmp: path.join(dir, "tmp"),
      // The check's own files there are thrown away: only the agent's outputs folder is uploaded.
      outputsDir: path.join(dir, "outputs"),
      // The rest of the checkout, when the working directory is a folder of it, as the agent saw it: readable.
      readOnlyPaths: [...req.installed.readOnlyPaths, ...(workspace === workTree ? [] : [workTree])],
    };
    const gitScratch = path.join(dir, "git");
    await Promise.all([layout.home, layout.tmp, layout.outputsDir, gitScratch].map((d) => mkdir(d, { recursive: true })));
    const { tree, changedFiles } = await treeForCheck(repo, baseline, gitScratch, source.earlierAgent ? "base" : "start");
    await materialiseCheckCopy(repo, { tree, ignored: source.ignored, dest: workTree, scratchDir: gitScratch });
    await mkdir(workspace, { recursive: true });
    sandbox = await source.sandboxBackend.prepare({
      layout,
      network: settings.run.network,
      log,
      ...(req.credentialFiles?.length ? { credentialFiles: req.credentialFiles } : {}),
      ...(settings.sandbox.dockerImage ? { dockerImage: settings.sandbox.dockerImage } : {}),
    });
    const env = {
      ...buildAgentEnv({ layout, run: settings.run, backendEnv: {}, pathPrepend: [path.dirname(req.installed.binPath)], runId: req.runId }).env,
      ...sandbox.env(),
    };
    const command = settings.verify?.command ?? [];
    const spec = sandbox.wrap({ file: command[0]!, args: command.slice(1), cwd: workspace, env });
    const ignored = describeIgnored(source);
    const described = `a clean copy: the base commit with the patch (${changedFiles.length} file(s)), ${ignored}, a fresh HOME (made in ${((Date.now() - started) / 1000).toFixed(1)} s)`;
    const made = sandbox;
    return {
      spec,
      sandbox: made,
      described,
      cleanup: async () => {
        await made.cleanup().catch((e: unknown) => log.warning(`Sandbox cleanup after verify-command failed: ${String(e)}`));
        await rm(dir, { recursive: true, force: true }).catch(() => undefined);
      },
    };
  } catch (e) {
    await sandbox?.cleanup().catch(() => undefined);
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    throw e;
  }
}

/** What the copy holds besides the patch's tree, for the log line. */
function describeIgnored({ ignored, earlierAgent, baseline }: CheckSource): string {
  if (!earlierAgent) return ignored ? `${ignored.entries} ignored path(s) as they were before the agent started` : "no ignored files";
  const files = ignored
    ? `${ignored.entries} ignored path(s) as they were before this job's first agent started`
    : "no ignored files (none were kept before this job's first agent started)";
  return baseline.preexisting.length ? `${files}, ${baseline.preexisting.length} path(s) changed before this run as the base commit has them` : files;
}
