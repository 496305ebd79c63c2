import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Every file talks to the one database in DATABASE_URL; files run one after another.
    fileParallelism: false,
    // One worker thread for the whole run: the files share nothing but the database, and a cycle
    // spends most of its time starting workers otherwise.
    pool: "threads",
    isolate: false,
    testTimeout: 15_000,
  },
});
