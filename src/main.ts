import { coreIO } from "./action-io.js";
import { runAction } from "./action.js";

await runAction(coreIO());
