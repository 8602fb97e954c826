// `npm run test:durations`: after a full `npm test`, keeps each test file's duration from
// test-results/timing.json in test/durations.json (committed), which test/sequencer.ts reads on a
// fresh clone to start the longest files first.
import { readFileSync, writeFileSync } from "node:fs";

const timing = JSON.parse(readFileSync("test-results/timing.json", "utf8"));
const files = timing.files.map(({ file, ms }) => ({ file, ms })).sort((a, b) => b.ms - a.ms);
writeFileSync("test/durations.json", JSON.stringify({ note: "written by npm run test:durations from a full run's test-results/timing.json", files }, null, 1) + "\n");
console.log(`test/durations.json: ${files.length} files`);
