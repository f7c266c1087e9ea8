// Mastodon destinations for the publishing benchmarks: one local fake per destination (one account
// each), connected through the API as a person would. Herald publishes one post at a time per
// destination (in due order), so a backlog spread over many destinations is what measures a process's
// throughput; one destination would measure one call after another.
import { startMastodonFake, type MastodonFake } from "../test/fakes/mastodon.ts";
import { returnFromOAuth } from "../test/helpers/oauth-return.ts";

/** Destinations in the engine benchmarks: more than one process's calls in flight (default 64). */
export const BENCH_DESTINATIONS = 100;

export interface BenchDestinations {
  fakes: MastodonFake[];
  /** Destination ids, in the order of `fakes`. */
  ids: string[];
}

/** Starts `count` Mastodon fakes and connects each as a destination of workspace `ws`. */
export async function connectMastodonDestinations(
  origin: string,
  key: string,
  ws: string,
  count = BENCH_DESTINATIONS,
): Promise<BenchDestinations> {
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(origin + path, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (response.status >= 300)
      throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as Record<string, string>;
  };
  const fakes: MastodonFake[] = [];
  const ids: string[] = [];
  const connections = `/v1/workspaces/${ws}/destination-connections`;
  for (let d = 0; d < count; d++) {
    const fake = await startMastodonFake({ mediaProcessingPolls: 0 });
    fakes.push(fake);
    const started = await api("POST", connections, { provider: "mastodon", instance_origin: fake.origin });
    const authorize = await fetch(started.authorization_url!, { redirect: "manual" });
    // The return page asks the person to confirm before the connection completes.
    await returnFromOAuth(authorize.headers.get("location")!);
    ids.push((await api("GET", `${connections}/${started.id}`)).destination_id!);
  }
  return { fakes, ids };
}

/** Statuses the fakes hold in all. */
export function statusCount(destinations: BenchDestinations): number {
  return destinations.fakes.reduce((n, fake) => n + fake.statuses.length, 0);
}

export async function stopFakes(destinations: BenchDestinations): Promise<void> {
  for (const fake of destinations.fakes) await fake.stop();
}
