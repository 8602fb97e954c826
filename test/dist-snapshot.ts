/**
 * The suite runs a snapshot of the build taken when it starts (vitest.config.ts
 * runs this as globalSetup): dist/ and action.yml are copied to
 * `.test-dist/<pid>/`, and AGENT_RUNNER_ACTION_ROOT, which every test that runs
 * or reads the built action goes through (test/support/harness.ts's
 * ACTION_ROOT), names the copy. A `npm run build` while the suite runs then
 * rewrites dist/ without touching what the running tests load: its chunk
 * names change with every content change, and a step half-way through
 * loading the old build would otherwise find its chunks gone.
 *
 * The copy sits inside the checkout, not in the system's temp folder, so it
 * keeps the place the action has on a runner: outside the workspace and the
 * sandbox's scratch space. An AGENT_RUNNER_ACTION_ROOT set by hand (an older
 * commit's build, to see a new attack test fail there) is snapshotted the same way.
 */
import { cpSync, mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export default function snapshotDist(): () => void {
  // vitest runs the global setup for the root and for each project (vitest.config.ts): one snapshot per run.
  if (process.env.AGENT_RUNNER_SNAPSHOT_TAKEN_BY === String(process.pid)) return () => {};
  const source = process.env.AGENT_RUNNER_ACTION_ROOT ? path.resolve(process.env.AGENT_RUNNER_ACTION_ROOT) : REPO_ROOT;
  const snapshot = path.join(REPO_ROOT, ".test-dist", String(process.pid));
  rmSync(snapshot, { recursive: true, force: true });
  mkdirSync(snapshot, { recursive: true });
  cpSync(path.join(source, "dist"), path.join(snapshot, "dist"), { recursive: true });
  cpSync(path.join(source, "action.yml"), path.join(snapshot, "action.yml"));
  // Read by the test workers, which start after global setup and inherit this environment.
  process.env.AGENT_RUNNER_ACTION_ROOT = snapshot;
  process.env.AGENT_RUNNER_ACTION_SNAPSHOT_OF = source;
  process.env.AGENT_RUNNER_SNAPSHOT_TAKEN_BY = String(process.pid);
  return () => rmSync(snapshot, { recursive: true, force: true });
}
