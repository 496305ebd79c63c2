import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Example applications' own tests need a DATABASE_URL from a cycle: the cycle tests run them.
    include: ["test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "test/**/fixtures/**"],
    globalSetup: ["test/setup/build-lib.ts", "test/setup/postgres.ts"],
    setupFiles: ["test/setup/each-file.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // A skipped or focused test cannot fail: refuse to run them at all.
    allowOnly: false,
  },
});
