/**
 * A vitest reporter that ends the output with every test skipped while
 * running (`ctx.skip(reason)`) and its reason: the default reporter only
 * counts skips, so "16 skipped" would say nothing about why. The preflight
 * (test/preflight.ts) guarantees what the suite needs; what is left to skip
 * is what a machine may lawfully lack, such as a Docker engine.
 */
import path from "node:path";
import type { Reporter, TestModule } from "vitest/node";

export default class SkipReasons implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const lines: string[] = [];
    for (const mod of testModules) {
      for (const test of mod.children.allTests("skipped")) {
        // Filtered out (-t, .only) or skipped statically: not a decision made on this machine.
        if (test.options.mode !== "run") continue;
        const result = test.result();
        const note = result.state === "skipped" && result.note ? result.note : "no reason given (use ctx.skip(reason))";
        lines.push(`  ↓ ${path.relative(process.cwd(), mod.moduleId)} › ${test.fullName}: ${note}`);
      }
    }
    if (lines.length) process.stdout.write(`\nSkipped on this machine (${lines.length}):\n${lines.join("\n")}\n`);
  }
}
