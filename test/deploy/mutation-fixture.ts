import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { ConsortConfig } from "../../src/config/consort-config.js";

/**
 * A two-file project for real StrykerJS runs: `src/price.js` (the track adds `discounted`) and its
 * vitest test. `strong` tests pin the discount down; `weak` ones only check that it answers.
 */

const git = promisify(execFile);

/** Our own node_modules holds @stryker-mutator/core and the vitest runner: the tests point the action's tool folder at it. */
export const OUR_TOOLS = resolve(".");

const BASE_CODE = `export function total(items) {
  let sum = 0;
  for (const item of items) sum += item.price * item.quantity;
  return sum;
}
`;

const TRACK_CODE = `${BASE_CODE}
export function discounted(amount, percent) {
  if (percent > 80) return 0;
  return amount - (amount * percent) / 100;
}
`;

const TESTS = {
  strong: `import { expect, test } from "vitest";
import { discounted, total } from "../src/price.js";
test("total adds price times quantity", () => {
  expect(total([{ price: 2, quantity: 3 }, { price: 1, quantity: 1 }])).toBe(7);
});
test("a discount takes its percent off", () => {
  expect(discounted(200, 10)).toBe(180);
});
test("a discount above 80 percent makes it free", () => {
  expect(discounted(200, 90)).toBe(0);
  expect(discounted(200, 80)).toBe(40);
});
`,
  weak: `import { expect, test } from "vitest";
import { discounted, total } from "../src/price.js";
test("total adds price times quantity", () => {
  expect(total([{ price: 2, quantity: 3 }, { price: 1, quantity: 1 }])).toBe(7);
});
test("a discount answers", () => {
  expect(discounted(200, 10)).toBeDefined();
});
`,
};

export interface PriceProject {
  dir: string;
  base: string;
  head: string;
  remove: () => Promise<void>;
}

/** The project at two commits: the merge base (total alone) and the track's head (discounted, and the variant's tests). */
export async function priceProject(
  variant: keyof typeof TESTS,
  extraTest = "",
  parent: string = tmpdir(),
): Promise<PriceProject> {
  const dir = await mkdtemp(join(parent, "consort-mutation-"));
  const run = (...args: string[]) => git("git", args, { cwd: dir });
  await mkdir(join(dir, "src"));
  await mkdir(join(dir, "test"));
  await writeFile(join(dir, "package.json"), `{ "name": "price", "private": true, "type": "module" }\n`);
  await writeFile(join(dir, ".gitignore"), "node_modules\n");
  await writeFile(join(dir, "vitest.config.js"), `export default { test: { include: ["test/**/*.test.js"] } };\n`);
  await writeFile(join(dir, "src/price.js"), BASE_CODE);
  await writeFile(
    join(dir, "test/price.test.js"),
    `import { expect, test } from "vitest";\nimport { total } from "../src/price.js";\ntest("total adds price times quantity", () => {\n  expect(total([{ price: 2, quantity: 3 }])).toBe(6);\n});\n`,
  );
  await run("init", "-q", "-b", "main");
  await run("-c", "user.name=t", "-c", "user.email=t@example.com", "add", "-A");
  await run("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base");
  const base = (await run("rev-parse", "HEAD")).stdout.trim();
  await writeFile(join(dir, "src/price.js"), TRACK_CODE);
  await writeFile(join(dir, "test/price.test.js"), TESTS[variant] + extraTest);
  await run("-c", "user.name=t", "-c", "user.email=t@example.com", "add", "-A");
  await run("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "discounted");
  const head = (await run("rev-parse", "HEAD")).stdout.trim();
  // Installed beside the commit, as a job's install leaves it: a folder (the confined user writes
  // vitest's cache there) of links into our own node_modules.
  await mkdir(join(dir, "node_modules"));
  for (const name of await readdir(join(OUR_TOOLS, "node_modules")))
    if (!name.startsWith(".vite"))
      await symlink(join(OUR_TOOLS, "node_modules", name), join(dir, "node_modules", name));
  return { dir, base, head, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** The project's configuration: vitest, and the floor when one is given. */
export function priceConfig(minScore?: number): ConsortConfig {
  return ConsortConfig.parse({
    runner: "vitest",
    commands: { test: "npx vitest run" },
    gates: { deploy: { mutation: { timeoutMinutes: 5, ...(minScore !== undefined ? { minScore } : {}) } } },
  });
}
