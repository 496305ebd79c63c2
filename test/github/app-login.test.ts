import { describe, expect, it } from "vitest";
import { appLoginOnce } from "../../src/github/app-login.js";

describe("the app's bot login", () => {
  it("is <slug>[bot], asked of GitHub once for the process", async () => {
    let asked = 0;
    const login = appLoginOnce(async () => {
      asked += 1;
      return { id: 1, slug: "consort", name: "Consort" };
    });

    expect(await login()).toBe("consort[bot]");
    expect(await login()).toBe("consort[bot]");
    expect(asked).toBe(1);
  });

  it("asks again after a failed ask, instead of keeping the failure", async () => {
    const answers: Array<() => unknown> = [
      () => {
        throw new Error("502 Bad Gateway");
      },
      () => ({ slug: "consort" }),
    ];
    const login = appLoginOnce(async () => answers.shift()!());

    await expect(login()).rejects.toThrow("502 Bad Gateway");
    expect(await login()).toBe("consort[bot]");
  });

  it("refuses an answer that names no slug: the app could not tell its own commits", async () => {
    const login = appLoginOnce(async () => ({ id: 1, name: "Consort" }));

    await expect(login()).rejects.toThrow(
      "GitHub's answer to GET /app names no app slug, so the app cannot tell its own commits",
    );
  });
});
