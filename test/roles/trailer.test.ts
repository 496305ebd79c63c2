import { describe, expect, it } from "vitest";
import { readRoleTrailer } from "../../src/roles/trailer.js";

/** The `Consort-Role:` trailer as git reads trailers: the last paragraph's `Key: value` lines. */

const ROLE_LIST = "product-owner, spec-author, architect, dba, test-strategist, ux-designer, navigator, driver";
const driver = { ok: true, role: "driver" };

describe("reading the Consort-Role trailer", () => {
  it.each([
    ["CRLF line endings", "Fix it\r\n\r\nConsort-Role: driver\r\n"],
    ["CR line endings", "Fix it\r\rConsort-Role: driver\r"],
    ["blank lines after the trailer", "Fix it\n\nConsort-Role: driver\n\n\n"],
    ["a blank line of spaces and tabs between paragraphs", "Fix it\n \t \nConsort-Role: driver"],
    ["no space after the colon", "Fix it\n\nConsort-Role:driver"],
    ["spaces around the colon and after the value", "Fix it\n\nConsort-Role  :  driver  "],
  ])("reads the role with %s", (_, message) => {
    expect(readRoleTrailer(message)).toEqual(driver);
  });

  it("reads a trailer only at the start of its line", () => {
    expect(readRoleTrailer("Fix it\n\nsee Consort-Role: driver")).toEqual({
      ok: false,
      reason: `no Consort-Role trailer: end the commit message with a blank line and \`Consort-Role: <role>\` (one of ${ROLE_LIST})`,
    });
  });

  it("names every claimed role and every known one, word for word", () => {
    expect(readRoleTrailer("x\n\nConsort-Role: driver\nConsort-Role: navigator\nConsort-Role: dba")).toEqual({
      ok: false,
      reason: "the commit claims 3 roles (driver, navigator, dba): one commit, one role",
    });
    expect(readRoleTrailer("x\n\nConsort-Role: reviewer")).toEqual({
      ok: false,
      reason: `unknown role "reviewer" in the Consort-Role trailer: use one of ${ROLE_LIST}`,
    });
  });

  it("counts one role claimed twice as one", () => {
    expect(readRoleTrailer("x\n\nConsort-Role: driver\nconsort-role: driver")).toEqual(driver);
  });
});
