import { z } from "zod";

/** The part of GitHub's `GET /app` answer that names the app's bot. */
const AppAnswer = z.object({ slug: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, "a GitHub App slug") });

/**
 * The app's bot login, `<slug>[bot]`: the account GitHub makes the author of what the app writes
 * through the API. Asked of GitHub (`GET /app`, with the app's JWT) on first use and kept for the
 * process; a failed ask is not kept, so the next delivery asks again.
 */
export function appLoginOnce(ask: () => Promise<unknown>): () => Promise<string> {
  let login: Promise<string> | undefined;
  return () => {
    login ??= ask()
      .then((answer) => {
        const parsed = AppAnswer.safeParse(answer);
        if (!parsed.success)
          throw new Error("GitHub's answer to GET /app names no app slug, so the app cannot tell its own commits");
        return `${parsed.data.slug}[bot]`;
      })
      .catch((error: unknown) => {
        login = undefined;
        throw error;
      });
    return login;
  };
}
