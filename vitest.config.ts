import { configDefaults, defineConfig } from "vitest/config";
import LongestFirst from "./test/sequencer.js";

/**
 * Test files that need a module graph of their own: vi.mock of a module the others import too only
 * takes hold in a graph that has not loaded it yet, and would stay behind for the next file.
 */
const ISOLATED = ["test/unit/checkpoint.test.ts"];

export default defineConfig({
  test: {
    // Hang detectors, not speed checks (speed is `npm run bench`'s): an end-to-end test that takes 10 s on
    // a quiet machine takes over a minute at load 20 on two cores, and must still pass there.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // Two cores here. End-to-end tests spend part of their time waiting on real CLIs, sandboxes, timers and
    // local servers, which leaves a core idle unless other files have work: on fresh clones, two workers
    // took 657-676 s, three 541 s, four 503 s and five 496-550 s (workers that keep their modules, below;
    // runs here spread by about 10 %).
    maxWorkers: 5,
    // Longest files first, from the last run's timings: the workers end together. After-hooks run last
    // to first (vitest's default), which test/cpu-meter.ts counts on.
    sequence: { sequencer: LongestFirst, hooks: "stack" },
    // A worker is a process of its own (vitest's default): test/cpu-meter.ts gives it a control group of
    // its own, or reads its CPU from /proc.
    pool: "forks",
    // One check of the machine before any test: missing tools stop the run with one message.
    // Then a snapshot of dist/ that the whole run uses: a rebuild during the run can't break it, and a
    // temporary folder of the run's own, and a control group each worker counts its CPU in (as root).
    globalSetup: ["./test/preflight.ts", "./test/dist-snapshot.ts", "./test/temp-folder.ts", "./test/cpu-cgroup.ts"],
    // Each test's and test file's CPU time, for the timing report below.
    setupFiles: ["./test/cpu-meter.ts"],
    // The default output, each test skipped on this machine with its reason, then the slowest files
    // and tests and the files that cost the most CPU (all timings in test-results/timing.json).
    reporters: ["default", "./test/preflight-skips.ts", "./test/timing-report.ts"],
    // Imports its JSON schema without an import attribute, which Node 24 refuses;
    // inlining lets Vite load the JSON.
    server: { deps: { inline: ["@actions/workflow-parser"] } },
    projects: [
      // A worker keeps its modules from one test file to the next: each file no longer loads the
      // support code, the fakes and the action's sources again (a third of a unit file's CPU).
      { extends: true, test: { name: "shared", isolate: false, include: ["test/**/*.test.ts", "src/**/*.test.ts"], exclude: [...configDefaults.exclude, ...ISOLATED] } },
      { extends: true, test: { name: "isolated", include: ISOLATED } },
    ],
  },
});
