import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { gitBlobId, hashFrozenText, manifestHash, manifestHashFromHashes } from "../../src/gates/hash.js";

describe("hashFrozenText", () => {
  it("is the sha256 hex of the text", () => {
    expect(hashFrozenText("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
  it("treats CRLF and CR line endings as LF", () => {
    expect(hashFrozenText("a\r\nb\rc\n")).toBe(hashFrozenText("a\nb\nc\n"));
  });
  it("sees any other change", () => {
    expect(hashFrozenText("a\nb\n")).not.toBe(hashFrozenText("a\nb \n"));
  });
});

describe("manifestHash", () => {
  it("does not depend on the order the paths come in", () => {
    const a = manifestHash({ ".consort/spec.json": "{}", ".consort/architecture.json": "[]" });
    const b = manifestHash({ ".consort/architecture.json": "[]", ".consort/spec.json": "{}" });
    expect(a).toBe(b);
  });
  it("changes when a file's text changes, or a file moves", () => {
    const base = manifestHash({ ".consort/spec.json": "{}" });
    expect(manifestHash({ ".consort/spec.json": "{ }" })).not.toBe(base);
    expect(manifestHash({ ".consort/spec2.json": "{}" })).not.toBe(base);
    expect(manifestHash({ ".consort/spec.json": "{}", ".consort/ux.json": "{}" })).not.toBe(base);
  });
});

describe("manifestHashFromHashes", () => {
  it("is the sha256 of `path NUL hash LF` per file in path order (sha256sum of that text gives the same)", () => {
    // printf 'a.txt\0<64 ones>\nb.txt\0<64 twos>\n' | sha256sum
    expect(manifestHashFromHashes({ "b.txt": "2".repeat(64), "a.txt": "1".repeat(64) })).toBe(
      "f13462e2754b1e827e8ac54d394ddb475090b95bc406b358aa566f8d4da78308",
    );
  });
});

describe("gitBlobId", () => {
  it("is the id git itself gives the text's blob, so a tree read checks a file without its content", () => {
    for (const text of ["", "{}\n", '{"stories": []}\r\n', "ünïcødé\n"]) {
      const fromGit = execFileSync("git", ["hash-object", "--stdin"], { input: text, encoding: "utf8" }).trim();
      expect(gitBlobId(text)).toBe(fromGit);
    }
  });
});
