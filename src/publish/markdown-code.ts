/** Moved to shared/ (the review layer shows file names too); kept here for publish's importers. */
export { codeName, fenced } from "../shared/markdown-code.js";
