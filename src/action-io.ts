/** ActionIO on top of @actions/core: the real runner's file commands. */
import * as core from "@actions/core";
import type { ActionIO } from "./stage-context.js";
import { readActionInputs, readHostContext } from "./config/host.js";
import type { Logger } from "./logger.js";

export const coreLogger: Logger = {
  debug: (m) => core.debug(m),
  info: (m) => core.info(m),
  warning: (m) => core.warning(m),
  error: (m) => core.error(m),
  notice: (m) => core.notice(m),
  group: (title, fn) => core.group(title, fn),
};

/**
 * A cancelled job gets SIGINT, then SIGTERM 7.5 s later, then is killed:
 * turn the first into an abort so the agent's tree stops and the run still
 * writes its results, uploads and finishes its comment.
 */
export function cancellationSignal(): AbortSignal {
  const controller = new AbortController();
  for (const sig of ["SIGINT", "SIGTERM"] as const)
    process.once(sig, () => {
      core.warning(`Received ${sig}: stopping the agent; the run will still report.`);
      controller.abort();
    });
  return controller.signal;
}

export function coreIO(): ActionIO {
  return {
    signal: cancellationSignal(),
    inputs: readActionInputs(),
    host: readHostContext(),
    log: coreLogger,
    setSecret: (v) => core.setSecret(v),
    setOutput: (name, value) => core.setOutput(name, value),
    saveState: (name, value) => core.saveState(name, value),
    appendSummary: async (md) => {
      await core.summary.addRaw(md, true).write();
    },
    setFailed: (m) => core.setFailed(m),
  };
}
