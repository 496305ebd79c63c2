import { readFile } from "node:fs/promises";
import { describe, expect, test } from "vitest";
import { parse } from "yaml";
import { z } from "zod";

/**
 * The workflows `consort init` installs, read as GitHub reads them. Two shortcuts live in their
 * text: the track's install scripts running as the job's user before the action confines anything,
 * and the commands uploading their own "consort-cycle-result" before the job's step does. GitHub's
 * upload-artifact@v4 refuses a second artifact of a name (409) unless `overwrite` is set, so the
 * job's own upload fails, the run concludes failure, and the app refuses a verified result from it.
 */

const Step = z.looseObject({
  name: z.string().optional(),
  uses: z.string().optional(),
  run: z.string().optional(),
  with: z.record(z.string(), z.unknown()).optional(),
});
const Workflow = z.looseObject({ jobs: z.record(z.string(), z.looseObject({ steps: z.array(Step) })) });

const WORKFLOWS = ["consort-cycle.yml", "consort-deploy.yml", "consort-promote.yml"];

async function stepsOf(file: string) {
  const text = await readFile(new URL(`../../templates/${file}`, import.meta.url), "utf8");
  const workflow = Workflow.parse(parse(text.replace(/^__PROVIDER_ENV__$/m, "          {}")));
  return Object.values(workflow.jobs).flatMap((job) => job.steps);
}

describe.each(WORKFLOWS)("%s", (file) => {
  test("runs nothing of the track's outside the action: no install, no script step", async () => {
    const steps = await stepsOf(file);
    expect(steps.filter((s) => s.run !== undefined).map((s) => s.name ?? s.run)).toEqual([]);
    expect(steps.find((s) => s.uses === "./.github/actions/consort")?.with?.["working-directory"]).toBe("work");
  });

  test("uploads the result without overwrite, after the action, so an artifact uploaded first fails the run", async () => {
    const steps = await stepsOf(file);
    const upload = steps.findIndex((s) => s.uses?.startsWith("actions/upload-artifact@"));
    const action = steps.findIndex((s) => s.uses === "./.github/actions/consort");
    expect(steps[upload]!.with).toMatchObject({ name: "consort-cycle-result", "if-no-files-found": "error" });
    expect(steps[upload]!.with).not.toHaveProperty("overwrite");
    expect(upload).toBeGreaterThan(action);
  });
});
