/**
 * Post step (always runs, also after cancellation): removes the run's scratch
 * space (the agent's HOME and TMPDIR; results stay for later steps) and, if
 * the main step never finished, stops the agent processes it left and ends
 * its progress comment.
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
}
if (runDir && core.getState(STATE.finished) !== "true") {
  core.warning(`The main step did not finish; partial results may be in ${runDir}.`);
  // Only a main step that did not finish needs the process table, the inputs and the GitHub client:
  // loaded here, a post step after a finished main (nearly every job) loads none of them. The process
  // table first and alone, so left-over agents are stopped even if the rest failed to load.
  const agentRunId = core.getState(STATE.agentRunId);
  if (agentRunId) {
    const { killMarked } = await import("./sandbox/process.js");
    // One marker per agent process tree (several with `attempts`), separated by spaces.
    const killed = agentRunId.split(" ").filter(Boolean).reduce((n, id) => n + killMarked(id), 0);
    if (killed) core.info(`Stopped ${killed} agent process(es) the main step left behind.`);
  }
  const saved = core.getState(STATE.comment);
  if (saved) {
    const [{ finishAbandonedComment }, { readActionInputs, readHostContext }, { coreLogger }] = await Promise.all([
      import("./publish/abandoned-comment.js"),
      import("./config/host.js"),
      import("./action-io.js"),
    ]);
    const token = readActionInputs()["github-token"] ?? "";
    await finishAbandonedComment(saved, token, readHostContext().apiUrl, coreLogger)
      .then((done) => done && core.info("Marked the progress comment as stopped."))
      .catch((e: unknown) => core.warning(`Could not update the progress comment: ${String(e)}`));
  }
}
