import { vi } from "vitest";
import { runCli } from "../../src/cli/main.js";

/** The CLI in-process, as a shell would see it: stdout, stderr and the exit code. */
export async function runConsort(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const out = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => ((stderr += String(chunk)), true));
  const before = process.exitCode;
  try {
    const status = await runCli(["node", "consort", ...args]);
    return { status, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
    process.exitCode = before;
  }
}
