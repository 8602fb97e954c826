// `npm run test:durations`: keeps each test file's last known duration (test-results/durations.json,
// which the timing reporter merges over every run, full or partial) in test/durations.json (committed),
// which test/sequencer.ts reads on a fresh clone to start the longest files first.
import { readFileSync, writeFileSync } from "node:fs";

const timing = JSON.parse(readFileSync("test-results/durations.json", "utf8"));
const files = timing.files.map(({ file, ms }) => ({ file, ms })).sort((a, b) => b.ms - a.ms);
writeFileSync("test/durations.json", JSON.stringify({ note: "written by npm run test:durations from test-results/durations.json", files }, null, 1) + "\n");
console.log(`test/durations.json: ${files.length} files`);
