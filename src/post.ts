/**
 * Post step (always runs, also after cancellation): removes the run's scratch
 * space (the agent's HOME and TMPDIR). Results stay for later steps.
 */
import * as core from "@actions/core";
import { rm } from "node:fs/promises";
import path from "node:path";
import { STATE } from "./constants.js";

const runDir = core.getState(STATE.runTemp);
if (runDir) {
  await rm(path.join(runDir, "scratch"), { recursive: true, force: true }).catch((e: unknown) =>
    core.warning(`Could not remove the agent's scratch space ${runDir}: ${String(e)}`),
  );
  if (core.getState(STATE.finished) !== "true") core.warning("The main step did not finish; partial results may be in " + runDir);
}
