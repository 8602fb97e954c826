import { defineConfig } from "vitest/config";
import LongestFirst from "./test/sequencer.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    // Hang detectors, not speed checks (speed is `npm run bench`'s): an end-to-end test that takes 10 s on
    // a quiet machine takes over a minute at load 20 on two cores, and must still pass there.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // Two cores here. End-to-end tests spend part of their time waiting on real CLIs, sandboxes and local
    // servers, which left a core idle a fifth of the time with two workers: three took the suite from
    // 657-676 s to 590 s at the same CPU time (measured on fresh clones, see test/durations.json's run).
    maxWorkers: 3,
    // Longest files first, from the last run's timings: the workers end together.
    sequence: { sequencer: LongestFirst },
    // One check of the machine before any test: missing tools stop the run with one message.
    // Then a snapshot of dist/ that the whole run uses: a rebuild during the run can't break it.
    globalSetup: ["./test/preflight.ts", "./test/dist-snapshot.ts"],
    // The default output, each test skipped on this machine with its reason, then the slowest files
    // and tests (all timings in test-results/timing.json).
    reporters: ["default", "./test/preflight-skips.ts", "./test/timing-report.ts"],
    // Imports its JSON schema without an import attribute, which Node 24 refuses;
    // inlining lets Vite load the JSON.
    server: { deps: { inline: ["@actions/workflow-parser"] } },
  },
});
