import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
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
    // A file mostly waits (on Postgres, git, a cycle's child processes), so even 2 cores run two
    // at once; vitest's default (cores - 1) ran CI's files one by one. Each file makes its own
    // databases and folders on the one server, so files do not see each other.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // The release's mutation measurement takes StrykerJS from our own node_modules (never the
    // registry at test time), and keeps each run's incremental files apart from a runner's.
    env: {
      CONSORT_MUTATION_TOOLS: resolve("."),
      CONSORT_MUTATION_STATE: join(tmpdir(), `consort-mutation-state-${process.pid}`),
    },
    // A skipped or focused test cannot fail: refuse to run them at all.
    allowOnly: false,
  },
});
