import { coreIO } from "./action-io.js";
import { unreadableEvent } from "./trigger/event.js";

const io = coreIO();
// @actions/github (loaded with the pipeline, through @actions/artifact) parses
// GITHUB_EVENT_PATH as it loads and would crash on a broken file with a bare
// stack trace: check it first, then load the pipeline.
const problem = await unreadableEvent(io.host);
if (problem) io.setFailed(problem);
else {
  const { runAction } = await import("./action.js");
  await runAction(io);
}
