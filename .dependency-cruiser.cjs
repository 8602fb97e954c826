/**
 * The layers as code: `npm test` runs `depcruise src` with this file, so a new
 * import circle or an import that reaches up a layer fails CI.
 *
 * The stages, lowest first (README, Contributing, "Architecture"). A module may
 * import its own layer and the layers below it; layers on the same level are
 * peers and do not import each other.
 */

// dependency-cruiser reads TypeScript through the `typescript` package's API, which only TypeScript below 7
// has (the typecheck uses TypeScript 7, installed as `typescript-7`). Without it, depcruise cruises no module
// and still exits 0, so a layer check that checks nothing would pass: stop here instead.
const typescriptMajor = Number(require("typescript/package.json").version.split(".")[0]);
if (!(typescriptMajor >= 2 && typescriptMajor < 7)) {
  throw new Error(`npm run layers needs the devDependency typescript below 7 (found ${typescriptMajor}); keep TypeScript 7 as typescript-7.`);
}
const LAYERS = [
  // The vocabulary every stage speaks: names, types and pure helpers, no I/O of its own.
  { name: "shared", level: 0, path: "^src/(shared/|(errors|text|constants|logger|markdown|result)[.]ts$)" },
  // The host's private repository; the GitHub REST client.
  { name: "git", level: 1, path: "^src/git/" },
  { name: "github", level: 1, path: "^src/github/" },
  // The budget ledger across runs (a ref written through the Git Data API): entries, reading back, admission.
  { name: "ledger", level: 1.5, path: "^src/ledger/" },
  // What each safe-output kind is (input limits, the MCP tool's arguments, the GitHub write).
  { name: "safe-outputs", level: 2, path: "^src/safe-outputs/" },
  // Pull request review: the diff from local git, shards, merging shard reviews (task: review).
  { name: "review", level: 2.5, path: "^src/review/" },
  // Inputs → settings, file inputs, attachments, the delivery plan.
  { name: "config", level: 3, path: "^src/config/" },
  // What every stage receives (settings, host, redactor, logger) and what the trigger stage hands on.
  { name: "stage-context", level: 4, path: "^src/stage-context[.]ts$" },
  // Events recorded, transcripts, model-request records, OpenTelemetry export.
  { name: "trace", level: 5, path: "^src/trace/" },
  // none/bwrap/docker, env allowlist, the model gateway and budgets, the proxy.
  { name: "sandbox", level: 6, path: "^src/sandbox/" },
  // One file per agent CLI; the registry of backends.
  { name: "agents", level: 7, path: "^src/agents/" },
  // One run of one agent: install, sandbox, run, trace, diff (src/runner/: its parts, e.g. the verify loop). Knows no caller and no GitHub stage.
  { name: "runner", level: 8, path: "^src/(runner[.]ts$|runner/)" },
  // attempts: N runs of the runner from one start state, one chosen (select: verify or judge).
  { name: "attempts", level: 8.5, path: "^src/attempts/" },
  // The GitHub event before the agent starts: who, which thread, PR checkout, pasted files.
  { name: "trigger", level: 9, path: "^src/trigger/" },
  // What a finished run becomes: outputs, summary, comments, patch rules, delivery, safe outputs.
  { name: "publish", level: 10, path: "^src/publish/" },
  // Sessions carried across runs (artifacts named by item).
  { name: "session", level: 11, path: "^src/session/" },
  // One job per item: plan and gather.
  { name: "fanout", level: 12, path: "^src/fanout/" },
  // Who calls: the action's steps, the CLI, the sandboxed MCP server.
  { name: "entry", level: 13, path: "^src/((action|action-io|main|post|cli|safe-outputs-mcp)[.]ts$|cli/)" },
];

const upward = LAYERS.flatMap((from) => {
  const above = LAYERS.filter((to) => to.level > from.level || (to.level === from.level && to.name !== from.name));
  if (!above.length) return [];
  return {
    name: `${from.name}-stays-below`,
    comment: `${from.name} (level ${from.level}) imports only its own layer and lower ones, never ${above.map((l) => l.name).join(", ")}.`,
    severity: "error",
    from: { path: from.path },
    to: { path: above.map((l) => `(${l.path})`).join("|") },
  };
});

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "No import circles, type-only ones included: a circle means two modules are one.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    ...upward,
    {
      name: "publish-works-from-the-result",
      comment:
        "publish works from what the run left (result, patch, outputs folder) and never reaches back into the trigger stage, the sandbox, the agents or the runner: the publish step runs without them.",
      severity: "error",
      from: { path: "^src/publish/" },
      to: { path: "^src/((trigger|sandbox|agents|runner)/|runner[.]ts$)" },
    },
    {
      name: "runner-knows-no-caller",
      comment: "The runner never knows who called it: not the action, not the CLI.",
      severity: "error",
      from: { path: "^src/(runner[.]ts$|runner/)" },
      to: { path: "^src/((action|action-io|main|post|cli)[.]ts$|cli/)" },
    },
    {
      name: "mcp-server-alone",
      comment: "The safe-outputs MCP server runs inside the sandbox from one bundled file: it uses only the shared vocabulary and the safe-output kinds.",
      severity: "error",
      from: { path: "^src/safe-outputs-mcp[.]ts$" },
      to: { path: "^src/", pathNot: LAYERS.filter((l) => ["shared", "safe-outputs"].includes(l.name)).map((l) => `(${l.path})`).join("|") + "|^src/safe-outputs-mcp[.]ts$" },
    },
    {
      name: "every-module-in-a-layer",
      comment: "Each source file belongs to one layer: add new folders to LAYERS in .dependency-cruiser.cjs.",
      severity: "error",
      from: { path: "^src/", pathNot: LAYERS.map((l) => `(${l.path})`).join("|") },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "node_modules" },
    // Type-only imports count: a type that reaches up a layer is a dependency all the same.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    moduleSystems: ["es6"],
  },
};
