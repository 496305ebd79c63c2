import { readFileSync } from "node:fs";
import { z } from "zod";
import { zodProblems } from "../contracts/zod-error.js";

/**
 * The app's environment, validated once at boot. Outside production every credential may be
 * missing (Probot then serves its setup page); in production each missing one is named.
 */
const optionalText = z
  .string()
  .trim()
  .transform((value) => (value === "" ? undefined : value))
  .optional();

export const EnvSchema = z.object({
  NODE_ENV: z.enum(["production", "development", "test"]).default("development"),
  APP_ID: optionalText,
  PRIVATE_KEY: optionalText,
  PRIVATE_KEY_PATH: optionalText,
  WEBHOOK_SECRET: optionalText,
  /** Key for the HMAC that seals every state file on `consort/state`. */
  CONSORT_STATE_KEY: optionalText,
  /**
   * Keys CONSORT_STATE_KEY had before it was rotated, comma-separated: files they sealed still
   * open, and the app's next write of each seals it with the current key.
   */
  CONSORT_STATE_KEYS_PREVIOUS: z
    .string()
    .optional()
    .transform((value) =>
      (value ?? "")
        .split(",")
        .map((key) => key.trim())
        .filter((key) => key !== ""),
    ),
  PORT: z.coerce.number().int().min(1).max(65535).default(3000),
  HOST: z.string().default("localhost"),
  LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal"]).default("info"),
  /** The app's own Postgres database (src/app-store); by default a database on the embedded server. */
  DATABASE_URL: optionalText.pipe(z.url({ protocol: /^postgres(ql)?$/ }).optional()),
  /** Where the embedded Postgres keeps its data when the `local` provider is used. */
  CONSORT_DATA_DIR: optionalText,
  /** The app's OAuth client id and secret (Probot's setup writes both): the board's sign-in with GitHub. */
  GITHUB_CLIENT_ID: optionalText,
  GITHUB_CLIENT_SECRET: optionalText,
  /** The board's public address, e.g. https://consort.example.com (its callback is <url>/consort/callback). */
  CONSORT_BOARD_URL: optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
});

export type AppEnv = z.infer<typeof EnvSchema>;

export class EnvError extends Error {
  constructor(readonly problems: string[]) {
    super(`Consort cannot start:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "EnvError";
  }
}

const REQUIRED_IN_PRODUCTION: Array<[keyof AppEnv | "PRIVATE_KEY", string]> = [
  ["APP_ID", "the GitHub App's numeric id (from the app's settings page)"],
  ["PRIVATE_KEY", "the app's private key, as PRIVATE_KEY (PEM text) or PRIVATE_KEY_PATH (a file)"],
  ["WEBHOOK_SECRET", "the webhook secret set on the app, so signatures can be verified"],
  ["CONSORT_STATE_KEY", "a random secret of 32+ characters that seals the state files on consort/state"],
];

/** Parse the environment; throws EnvError naming every problem at once. */
export function loadEnv(source: NodeJS.ProcessEnv = process.env): AppEnv {
  const parsed = EnvSchema.safeParse(source);
  if (!parsed.success) {
    throw new EnvError(zodProblems(parsed.error));
  }
  const env = parsed.data;
  // Shapes first, in every mode: Probot would otherwise end in a stack trace on any of them.
  const problems = credentialShapeProblems(env);
  if (env.NODE_ENV !== "production") {
    if (problems.length > 0) throw new EnvError(problems);
    return env;
  }

  for (const [name, what] of REQUIRED_IN_PRODUCTION) {
    const present = name === "PRIVATE_KEY" ? (env.PRIVATE_KEY ?? env.PRIVATE_KEY_PATH) : env[name];
    if (!present) problems.push(`${name} is missing: ${what}.`);
  }
  if (env.CONSORT_STATE_KEY && env.CONSORT_STATE_KEY.length < 32) {
    problems.push("CONSORT_STATE_KEY is too short: use at least 32 random characters.");
  }
  // Never echo a key: say which one by its place in the list.
  env.CONSORT_STATE_KEYS_PREVIOUS.forEach((key, i) => {
    if (key.length < 32)
      problems.push(
        `CONSORT_STATE_KEYS_PREVIOUS: key ${i + 1} is too short to be a state key the app sealed with (32+ characters); list the old CONSORT_STATE_KEY values, comma-separated.`,
      );
  });
  if (problems.length > 0) throw new EnvError(problems);
  return env;
}

const PEM = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+-----END [A-Z ]*PRIVATE KEY-----/;

/** What is wrong with the shape of each credential that is set (a missing one is production's concern). */
function credentialShapeProblems(env: AppEnv): string[] {
  const problems: string[] = [];
  if (env.APP_ID && !/^\d+$/.test(env.APP_ID))
    problems.push(
      `APP_ID "${env.APP_ID}" is not a number: use the App ID from the app's settings page on GitHub (General → About), e.g. APP_ID=123456.`,
    );
  // Never echo a key: say what it should look like.
  if (env.PRIVATE_KEY && !PEM.test(env.PRIVATE_KEY.replace(/\\n/g, "\n")))
    problems.push(
      "PRIVATE_KEY is not a PEM private key (-----BEGIN RSA PRIVATE KEY----- … -----END RSA PRIVATE KEY-----): paste the whole .pem file the app's settings page generated (newlines as \\n), or set PRIVATE_KEY_PATH to the file instead.",
    );
  else if (!env.PRIVATE_KEY && env.PRIVATE_KEY_PATH) {
    let text: string | undefined;
    try {
      text = readFileSync(env.PRIVATE_KEY_PATH, "utf8");
    } catch (error) {
      problems.push(
        `PRIVATE_KEY_PATH ${env.PRIVATE_KEY_PATH} cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"}): point it at the .pem file the app's settings page generated.`,
      );
    }
    if (text !== undefined && !PEM.test(text))
      problems.push(
        `PRIVATE_KEY_PATH ${env.PRIVATE_KEY_PATH} holds no PEM private key: point it at the .pem file the app's settings page generated.`,
      );
  }
  return problems;
}

/** The PEM text of the private key, read from PRIVATE_KEY or the file at PRIVATE_KEY_PATH. */
export function privateKeyOf(env: AppEnv): string | undefined {
  if (env.PRIVATE_KEY) return env.PRIVATE_KEY.replace(/\\n/g, "\n");
  if (env.PRIVATE_KEY_PATH) return readFileSync(env.PRIVATE_KEY_PATH, "utf8");
  return undefined;
}
