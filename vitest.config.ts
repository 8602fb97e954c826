import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // End-to-end tests spawn real CLIs and sandboxes; two cores here.
    maxWorkers: 2,
    reporters: ["default"],
  },
});
