import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { Architecture } from "../artifacts/architecture.js";
import { formatZodError } from "../contracts/zod-error.js";
import { hashFrozenText } from "../gates/freeze.js";
import type { NewModule, NewModules } from "./new-modules.js";
import type { ArchitectureRef } from "../contracts/cycle-request.js";

/** The modules a track creates, as git holds them: what ./new-modules.ts judges a RED's failure by. */

const run = promisify(execFile);

async function git(cwd: string, args: string[], input?: string): Promise<string> {
  if (input === undefined) return (await run("git", args, { cwd, maxBuffer: 64 * 1024 * 1024 })).stdout;
  return await new Promise((resolvePromise, reject) => {
    const child = execFile("git", args, { cwd, maxBuffer: 64 * 1024 * 1024 }, (error, stdout) =>
      error ? reject(error) : resolvePromise(stdout),
    );
    child.stdin?.end(input);
  });
}

/** The object type (`blob`, `tree`) at each `commit:path`, or undefined where there is none. */
async function typesAt(cwd: string, commit: string, paths: string[]): Promise<Array<string | undefined>> {
  if (paths.length === 0) return [];
  const out = await git(
    cwd,
    ["cat-file", "--batch-check=%(objecttype)"],
    paths.map((p) => `${commit}:${p}\n`).join(""),
  );
  return out
    .split("\n")
    .slice(0, paths.length)
    .map((line) => (line.endsWith(" missing") || line === "" ? undefined : line.trim()));
}

/** A name the module's text mentions as a word: the text, not a run, says whether it is written. */
const mentions = (text: string, name: string) =>
  new RegExp(`(^|[^\\w$])${name.replace(/\$/g, "\\$")}($|[^\\w$])`).test(text);

/**
 * The declared modules the track creates, read from git: the approved architecture at `commit`
 * (refused unless it hashes as approved), each module's presence at `approvedAt` and at `commit`,
 * and which declared exports a written module's text does not mention.
 */
export async function newModulesAt(cwd: string, commit: string, ref: ArchitectureRef): Promise<NewModules> {
  const at = commit.slice(0, 12);
  try {
    await git(cwd, ["cat-file", "-e", `${ref.approvedAt}^{commit}`]);
  } catch {
    return {
      ok: false,
      reason: `the commit ${ref.approvedAt.slice(0, 12)} the design gate was approved on is not in the checkout, so no module can be shown new (fetch the track's full history)`,
    };
  }
  let text: string;
  try {
    text = await git(cwd, ["show", `${commit}:${ref.path}`]);
  } catch {
    return { ok: false, reason: `the approved architecture ${ref.path} is not in the commit ${at}` };
  }
  if (hashFrozenText(text) !== ref.sha256)
    return {
      ok: false,
      reason: `${ref.path} at ${at} is not the architecture the design gate approved, so it declares nothing (restore the approved file)`,
    };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `${ref.path} at ${at} is not valid JSON: ${(error as Error).message}` };
  }
  const parsed = Architecture.safeParse(data);
  if (!parsed.success) return { ok: false, reason: formatZodError(parsed.error, `${ref.path} at ${at} is invalid`) };
  const declared = parsed.data.modules.map((m) => ({
    path: m.path.replace(/^\.\//, "").replace(/\/$/, ""),
    exports: m.exports ?? [],
  }));
  const paths = declared.map((m) => m.path);
  const [before, now] = await Promise.all([typesAt(cwd, ref.approvedAt, paths), typesAt(cwd, commit, paths)]);
  const modules: NewModule[] = [];
  const existing: string[] = [];
  for (const [i, module] of declared.entries()) {
    if (before[i] !== undefined) {
      existing.push(module.path);
      continue;
    }
    const type = now[i];
    // A package (a folder) is written once it exists; its names cannot be read from one text, so none count as unwritten.
    const body = type === "blob" ? await git(cwd, ["show", `${commit}:${module.path}`]) : undefined;
    modules.push({
      path: module.path,
      written: type !== undefined,
      exports: module.exports,
      unwritten: body === undefined ? [] : module.exports.filter((name) => !mentions(body, name)),
    });
  }
  return { ok: true, modules, existing };
}
