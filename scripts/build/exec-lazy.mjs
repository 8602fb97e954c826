// What @actions/core imports from @actions/exec, evaluated on first use: core needs it only for
// `platform.getDetails()` (which runs sw_vers or lsb_release), but imports it, and @actions/io, at
// start-up. esbuild turns the require() below into a call of the bundled module's lazy initializer.
let exec;

export function getExecOutput(...args) {
  return (exec ??= require("@actions/exec")).getExecOutput(...args);
}
