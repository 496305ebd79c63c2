import { readFile } from "node:fs/promises";
import { parse as parseYaml } from "yaml";
import { ConsortConfig } from "../config/consort-config.js";
import { CycleInputError, formatIssues } from "./request.js";

/**
 * `.github/consort.yml` read from a file (the job reads the default branch's copy, never the
 * track's). A missing file is the defaults; an invalid one stops the cycle before anything runs.
 */
export async function loadConfigFile(path: string): Promise<{ config: ConsortConfig; source: "file" | "defaults" }> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT")
      return { config: ConsortConfig.parse({}), source: "defaults" };
    throw error;
  }
  let raw: unknown;
  try {
    raw = parseYaml(text) ?? {};
  } catch (error) {
    throw new CycleInputError(`${path} is not valid YAML: ${(error as Error).message.split("\n")[0]}`);
  }
  const parsed = ConsortConfig.safeParse(raw);
  if (!parsed.success)
    throw new CycleInputError(
      `${path} breaks the configuration schema:\n${formatIssues(parsed.error)}\nfix the file (consort init writes a valid starter)`,
    );
  return { config: parsed.data, source: "file" };
}
