import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  canonicalJson,
  checkStateFile,
  keyIdOf,
  openStateFile,
  sealState,
  serialiseStateFile,
  unsealed,
} from "../../src/state/seal.js";
import { TamperedStateError } from "../../src/state/errors.js";
import { KEY, TRACK, trackState } from "./helpers.js";

/**
 * Sealing and checking a state file on its own, every problem word for word: written against the
 * mutants `npm run mutate -- --mutate src/state/seal.ts` left alive behind the store's scenarios.
 */

const expected = { trackId: TRACK, repository: "acme/shop" };
const EMPTY_KEY =
  "The state key is empty: set CONSORT_STATE_KEY (32+ random characters) before reading or writing state";
const MISMATCH = "signature does not match the content (edited outside the app, or sealed with another key)";

/** A stored file's JSON, sealed by the app, with `changes` applied to the parsed object afterwards. */
function storedWith(changes: Record<string, unknown>): string {
  return JSON.stringify({ ...JSON.parse(serialiseStateFile(sealState(trackState(), KEY))), ...changes });
}

/** The design's seal, computed independently: HMAC-SHA256 over the canonical JSON of all but `signature`. */
const designSeal = (body: unknown, key = KEY) =>
  `hmac-sha256:${createHmac("sha256", key).update(canonicalJson(body)).digest("hex")}`;

describe("sealing a state", () => {
  it("the canonical JSON sorts keys at every depth, inside arrays too, and drops undefined members", () => {
    const value = { b: [{ d: 1, c: undefined, a: [undefined, { z: 1, y: 2 }] }], a: { f: 2, e: 1 } };
    expect(canonicalJson(value)).toBe('{"a":{"e":1,"f":2},"b":[{"a":[null,{"y":2,"z":1}],"d":1}]}');
  });

  it("names the key's id and signs the canonical JSON of everything else", () => {
    const file = sealState(trackState(), KEY);
    const { signature, ...body } = file;
    expect(body.keyId).toBe(keyIdOf(KEY));
    expect(signature).toBe(designSeal(body));
    expect(checkStateFile(serialiseStateFile(file), KEY, expected)).toMatchObject({ problems: [] });
  });

  it("refuses an empty or absent state key, saying which setting to set", () => {
    expect(() => sealState(trackState(), "")).toThrow(new Error(EMPTY_KEY));
    // As a missing environment variable reaches it at run time.
    const unset = process.env.CONSORT_STATE_KEY_NEVER_SET as string;
    expect(() => sealState(trackState(), unset)).toThrow(new Error(EMPTY_KEY));
    expect(() => checkStateFile(storedWith({}), "", expected)).toThrow(new Error(EMPTY_KEY));
  });
});

describe("checking a stored file", () => {
  it("a file that is not JSON is refused with the parser's words", () => {
    const parserSays = (() => {
      try {
        JSON.parse("{ not json");
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(checkStateFile("{ not json", KEY, expected)).toEqual({ problems: [`not valid JSON (${parserSays})`] });
  });

  it("a sound file of another track is refused, naming both track ids", () => {
    expect(checkStateFile(storedWith({}), KEY, { trackId: "feature-other" }).problems).toEqual([
      `trackId is "${TRACK}" but the file is for "feature-other"`,
    ]);
  });

  it("a file that is JSON but not an object is refused as such", () => {
    for (const text of ["[1, 2]", "null", '"a state"', "42"])
      expect(checkStateFile(text, KEY, expected)).toEqual({ problems: ["not a JSON object"] });
  });

  it("a file without a signature says so, and nothing about a mismatch", () => {
    const { signature: _dropped, ...unsigned } = JSON.parse(storedWith({})) as Record<string, unknown>;
    expect(checkStateFile(JSON.stringify(unsigned), KEY, expected).problems).toEqual([
      "signature is missing",
      "schema: signature: Invalid input: expected string, received undefined",
    ]);
  });

  it("a signature that is not text, or not of a signature's length, does not match", () => {
    expect(checkStateFile(storedWith({ signature: 12345 }), KEY, expected).problems).toEqual([
      MISMATCH,
      "schema: signature: Invalid input: expected string, received number",
    ]);
    expect(checkStateFile(storedWith({ signature: "hmac-sha256:abc" }), KEY, expected).problems).toEqual([
      MISMATCH,
      "schema: signature: hmac-sha256:<64 hex digits>",
    ]);
  });

  it("a file sealed before key ids were kept opens with its signature alone", () => {
    const { signature: _old, keyId: _none, ...body } = sealState(trackState(), KEY);
    const text = JSON.stringify({ ...body, signature: designSeal(body) });
    expect(checkStateFile(text, KEY, expected).problems).toEqual([]);
    // Without a key id to compare, another key is told by its signature.
    expect(
      checkStateFile(JSON.stringify({ ...body, signature: designSeal(body, "x".repeat(40)) }), KEY, expected),
    ).toMatchObject({ problems: [MISMATCH] });
  });

  it("a file sealed with a key retired by a rotation opens while that key is listed as a previous one", () => {
    const old = "o".repeat(40);
    const text = serialiseStateFile(sealState(trackState(), old));
    expect(checkStateFile(text, KEY, expected, [old]).problems).toEqual([]);
    // The retired key opens only what it sealed: a file it did not seal still has to match the current key.
    expect(checkStateFile(storedWith({}), KEY, expected, [old]).problems).toEqual([]);
    expect(checkStateFile(storedWith({ branch: "feature/edited" }), KEY, expected, [old]).problems).toEqual([MISMATCH]);
  });

  it("a file sealed with a key in neither place is refused, naming its key id and what to set", () => {
    const text = serialiseStateFile(sealState(trackState(), "o".repeat(40)));
    const other = "p".repeat(40);
    expect(checkStateFile(text, KEY, expected).problems).toEqual([
      `sealed with state key ${keyIdOf("o".repeat(40))}, which is not this app's key ${keyIdOf(KEY)}: if the key was rotated, list the old one in CONSORT_STATE_KEYS_PREVIOUS; otherwise re-seal from the last version sealed with a key the app has`,
    ]);
    expect(checkStateFile(text, KEY, expected, [other]).problems).toEqual([
      `sealed with state key ${keyIdOf("o".repeat(40))}, which is not this app's key ${keyIdOf(KEY)} nor one of its previous keys (${keyIdOf(other)}): if the key was rotated, list the old one in CONSORT_STATE_KEYS_PREVIOUS; otherwise re-seal from the last version sealed with a key the app has`,
    ]);
    const another = "q".repeat(40);
    expect(checkStateFile(text, KEY, expected, [other, another]).problems).toEqual([
      `sealed with state key ${keyIdOf("o".repeat(40))}, which is not this app's key ${keyIdOf(KEY)} nor one of its previous keys (${keyIdOf(other)}, ${keyIdOf(another)}): if the key was rotated, list the old one in CONSORT_STATE_KEYS_PREVIOUS; otherwise re-seal from the last version sealed with a key the app has`,
    ]);
  });

  it("a key id that is not text is not taken for a key: the signature decides", () => {
    const text = storedWith({ keyId: 7 });
    expect(checkStateFile(text, KEY, expected).problems).toEqual([
      MISMATCH,
      "schema: keyId: Invalid input: expected string, received number",
    ]);
  });

  it("a file of another repository is refused, whatever the case of the names", () => {
    const text = storedWith({});
    expect(checkStateFile(text, KEY, { trackId: TRACK, repository: "acme/other" }).problems).toEqual([
      'repository is "acme/shop" but this is acme/other',
    ]);
    expect(checkStateFile(text, KEY, { trackId: TRACK, repository: "ACME/Shop" }).problems).toEqual([]);
    expect(checkStateFile(text, KEY, { trackId: TRACK }).problems).toEqual([]);
  });

  it("opening a file with any problem throws the tampered-state error naming them", () => {
    const text = storedWith({ keyId: 7 });
    const where = { trackId: TRACK, path: `tracks/${TRACK}.json` };
    expect(() => openStateFile(text, KEY, where)).toThrow(TamperedStateError);
    expect(openStateFile(storedWith({}), KEY, where)).toMatchObject({ trackId: TRACK, keyId: keyIdOf(KEY) });
  });

  /** The problems of the TamperedStateError that opening `text` throws; fails if it opens. */
  function refusal(text: string): string[] {
    const where = { trackId: TRACK, path: `tracks/${TRACK}.json` };
    try {
      openStateFile(text, KEY, where);
    } catch (error) {
      expect(error).toBeInstanceOf(TamperedStateError);
      return (error as TamperedStateError).problems;
    }
    throw new Error("the file opened");
  }

  it("a file whose keys were put in another order, content unchanged, still opens", () => {
    const reversed = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(reversed)
        : value !== null && typeof value === "object"
          ? Object.fromEntries(
              Object.entries(value)
                .reverse()
                .map(([k, v]) => [k, reversed(v)]),
            )
          : value;
    const text = serialiseStateFile(sealState(trackState(), KEY));
    const shuffled = JSON.stringify(reversed(JSON.parse(text)), null, 4);
    expect(shuffled).not.toBe(text);
    expect(checkStateFile(shuffled, KEY, expected)).toMatchObject({ problems: [] });
  });

  it("the stored text lists every key sorted, the signature among them", () => {
    const text = serialiseStateFile(sealState(trackState(), KEY));
    expect(text).toBe(`${JSON.stringify(JSON.parse(canonicalJson(JSON.parse(text))), null, 2)}\n`);
    expect(Object.keys(JSON.parse(text))).toEqual(Object.keys(JSON.parse(text)).sort());
  });

  it("a file whose schema holds but whose signature does not is not opened", () => {
    expect(refusal(storedWith({ branch: "feature/edited" }))).toEqual([MISMATCH]);
  });

  it("a file sealed with another key is not opened when no previous keys are given", () => {
    const sealedWith = "Stryker was here";
    const text = serialiseStateFile(sealState(trackState(), sealedWith));
    expect(refusal(text)).toEqual([
      `sealed with state key ${keyIdOf(sealedWith)}, which is not this app's key ${keyIdOf(KEY)}: if the key was rotated, list the old one in CONSORT_STATE_KEYS_PREVIOUS; otherwise re-seal from the last version sealed with a key the app has`,
    ]);
  });

  it("unsealing gives the state without its signature", () => {
    const state = trackState();
    const { signature: _signature, ...body } = sealState(state, KEY);
    expect(unsealed(sealState(state, KEY))).toEqual(body);
    expect(Object.keys(unsealed(sealState(state, KEY)))).not.toContain("signature");
  });
});
