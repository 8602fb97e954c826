/** ActionIO on top of @actions/core: the real runner's file commands. */
import * as core from "@actions/core";
import type { ActionIO } from "./stage-context.js";
import { readActionInputs, readHostContext } from "./config/host.js";
import type { Logger } from "./logger.js";

const coreLogger: Logger = {
  debug: (m) => core.debug(m),
  info: (m) => core.info(m),
  warning: (m) => core.warning(m),
  error: (m) => core.error(m),
  group: (title, fn) => core.group(title, fn),
};

export function coreIO(): ActionIO {
  return {
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
