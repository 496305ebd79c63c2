import type { GitHubClient } from "../github/client.js";

/**
 * GitHub never redelivers a failed or timed-out delivery by itself. On boot the app lists its
 * recent deliveries (`GET /app/hook/deliveries`, newest first) and asks again for each delivery
 * whose every attempt failed and that the queue never stored (a delivery that was stored is
 * already the queue's to finish). Redeliveries keep their `X-GitHub-Delivery` id, so one that
 * arrives twice is stored once.
 */

interface ListedDelivery {
  id: number;
  guid: string;
  status_code: number;
  delivered_at: string;
}

/** How far back a boot looks (GitHub keeps deliveries for 3 days). */
const LOOK_BACK_MS = 3 * 24 * 60 * 60 * 1000;
/** Pages of 100 deliveries read at most on one boot. */
const MOST_PAGES = 10;

const succeeded = (delivery: ListedDelivery) => delivery.status_code >= 200 && delivery.status_code < 300;

/**
 * Ask GitHub to redeliver the recent deliveries that failed and were never stored. `appOctokit`
 * is authenticated as the app (a JWT), as the deliveries API requires. Returns the guids asked for.
 */
export async function redeliverFailed(
  appOctokit: Pick<GitHubClient, "request">,
  queue: { stored(ids: readonly string[]): Promise<Set<string>> },
  now = new Date(),
): Promise<string[]> {
  const attempts = new Map<string, ListedDelivery[]>();
  let cursor: string | undefined;
  for (let page = 0; page < MOST_PAGES; page++) {
    const response = await appOctokit.request("GET /app/hook/deliveries", {
      per_page: 100,
      ...(cursor ? { cursor } : {}),
    });
    const listed = response.data as ListedDelivery[];
    for (const delivery of listed) attempts.set(delivery.guid, [...(attempts.get(delivery.guid) ?? []), delivery]);
    const oldest = listed.at(-1);
    cursor = /[?&]cursor=([^&>]+)[^>]*>;\s*rel="next"/.exec(String(response.headers.link ?? ""))?.[1];
    if (!cursor || !oldest || now.getTime() - Date.parse(oldest.delivered_at) > LOOK_BACK_MS) break;
  }
  const failed = [...attempts.entries()].filter(([, tries]) => !tries.some(succeeded));
  const stored = await queue.stored(failed.map(([guid]) => guid));
  const asked: string[] = [];
  for (const [guid, tries] of failed) {
    if (stored.has(guid)) continue;
    // The newest attempt (the list is newest first) is the one GitHub redelivers.
    await appOctokit.request("POST /app/hook/deliveries/{delivery_id}/attempts", { delivery_id: tries[0]!.id });
    asked.push(guid);
  }
  return asked;
}
