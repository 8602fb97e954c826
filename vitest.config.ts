import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // End-to-end tests spawn real CLIs and sandboxes; two cores here.
    maxWorkers: 2,
    reporters: ["default"],
    // Imports its JSON schema without an import attribute, which Node 24 refuses;
    // inlining lets Vite load the JSON.
    server: { deps: { inline: ["@actions/workflow-parser"] } },
  },
});
