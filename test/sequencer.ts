/**
 * Test files start longest first, so that the workers end together
 * instead of one finishing a long end-to-end file alone at the end. The
 * durations come from the runs on this machine (test-results/durations.json,
 * which test/timing-report.ts keeps over every run) or, on a fresh clone, from
 * the committed test/durations.json (regenerate it with `npm run
 * test:durations` after a full run). A file neither knows (a new one) starts first: it may be long.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

interface Timing {
  files: { file: string; ms: number }[];
}

function durations(root: string): Map<string, number> {
  const known = new Map<string, number>();
  for (const file of [path.join(root, "test", "durations.json"), path.join(root, "test-results", "durations.json")]) {
    if (!existsSync(file)) continue;
    try {
      const timing = JSON.parse(readFileSync(file, "utf8")) as Timing;
      for (const f of timing.files) known.set(f.file, f.ms);
    } catch {
      // A half-written or foreign file: order by what else is known.
    }
  }
  return known;
}

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const known = durations(root);
    const ms = (spec: TestSpecification) => known.get(path.relative(root, spec.moduleId)) ?? Number.POSITIVE_INFINITY;
    return [...files].sort((a, b) => ms(b) - ms(a));
  }
}
