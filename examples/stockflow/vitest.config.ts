import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Every file talks to the one database in DATABASE_URL; files run one after another.
    fileParallelism: false,
    testTimeout: 15_000,
  },
});
