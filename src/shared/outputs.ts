/** The action's outputs as strings, by name (constants.ts OUTPUTS): what a run, a delivery or a gather sets. */
import type { OutputName } from "../constants.js";

export type Outputs = Partial<Record<OutputName, string>>;
