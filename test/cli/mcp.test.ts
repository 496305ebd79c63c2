import { describe, expect, it } from "vitest";
import { runConsort } from "../helpers/cli.js";
import { repositoryFromRemote } from "../../src/cli/mcp.js";

describe("consort mcp", () => {
  it("refuses to start on a folder that does not exist, saying what to pass", async () => {
    const { status, stderr } = await runConsort("mcp", "-C", "/nonexistent/checkout");
    expect(status).toBe(1);
    expect(stderr).toContain("/nonexistent/checkout does not exist or is not a folder");
    expect(stderr).toContain("-C <dir>");
  });
});

describe("the repository a token reads consort/state from", () => {
  it("is read from the origin remote in its https, ssh and scp forms", () => {
    expect(repositoryFromRemote("https://github.com/acme/stockflow.git")).toBe("acme/stockflow");
    expect(repositoryFromRemote("https://github.com/acme/stockflow")).toBe("acme/stockflow");
    expect(repositoryFromRemote("git@github.com:acme/stock.flow.git\n")).toBe("acme/stock.flow");
    expect(repositoryFromRemote("ssh://git@github.example.com/acme/stockflow.git")).toBe("acme/stockflow");
  });

  it("is not guessed from a remote that names no owner/name", () => {
    expect(repositoryFromRemote("")).toBeUndefined();
    expect(repositoryFromRemote("/srv/git/stockflow")).toBeUndefined();
    expect(repositoryFromRemote("../stockflow.git")).toBeUndefined();
  });
});
