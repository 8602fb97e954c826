// The last step of `npm run setup` (scripts/setup.sh): the same check `npm test`
// makes before any test (test/preflight.ts), including the bwrap backend's own
// namespace probe. Run with Node 24 from node_modules/.bin, as `npm test` is.
import "./ts-hooks.mjs";

const { checkTestMachine, preflightMessage } = await import("../test/preflight.ts");

const started = performance.now();
const { problems, found } = await checkTestMachine(process.env.PATH ?? "");
const ms = Math.round(performance.now() - started);
if (problems.length) {
  process.stderr.write(`${preflightMessage(problems, "Fix the above, then run `npm run setup` again.")}\n`);
  process.exit(1);
}
console.log(`Ready for \`npm test\`: bubblewrap can create a sandbox here; ${Object.values(found).join(", ")} and Node 24 are on PATH (checked in ${ms} ms).`);
