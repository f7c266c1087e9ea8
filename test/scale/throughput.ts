// Publishing throughput of 1, 2 and 3 `herald serve` processes on one PostgreSQL database: each run
// is a fresh cluster (test/scale/cluster.ts) whose posts are all due at one moment, spread over
// Mastodon destinations (a fake each) that answer every request after a delay; the rate is posts
// over the time from that moment to the last publication. The numbers docs/scaling.md quotes (the
// slow-network load of bench/slow-network.ts: 10,000 posts, 100 destinations, 200 ms).
//
//   HERALD_DATABASE_URL=postgres://postgres@127.0.0.1:55432/postgres \
//     node_modules/.bin/bun test/scale/throughput.ts [posts=10000] [network delay ms=200] [destinations=100] \
//       [HERALD_PUBLISH_CONCURRENCY per process=the default]
import { cpus } from "node:os";
import { measureThroughput } from "./cluster.ts";

const posts = Number(process.argv[2] ?? 10_000);
const networkDelayMs = Number(process.argv[3] ?? 200);
const destinations = Number(process.argv[4] ?? 100);
const concurrency = process.argv[5];
if (!process.env.HERALD_DATABASE_URL) {
  console.error("set HERALD_DATABASE_URL to a PostgreSQL admin URL (test/helpers/database.ts)");
  process.exit(2);
}

console.log(
  `${posts} posts due at once over ${destinations} Mastodon destinations (a fake each, ${networkDelayMs} ms ` +
    `per request), concurrency ${concurrency ?? "default"} per process, ${cpus().length} cores, Bun ${Bun.version}`,
);
console.log(
  "| processes | seconds from due time to last publication | posts/s | × one process | " +
    "most calls in flight to one destination | each destination in due order | crashes logged |",
);
console.log("|---|---|---|---|---|---|---|");
let one = 0;
for (const processes of [1, 2, 3]) {
  const env: Record<string, string> = concurrency ? { HERALD_PUBLISH_CONCURRENCY: concurrency } : {};
  const run = await measureThroughput(processes, posts, { networkDelayMs, destinations, env });
  if (processes === 1) one = run.perSecond;
  console.log(
    `| ${processes} | ${run.seconds.toFixed(1)} | ${run.perSecond.toFixed(0)} | ${(run.perSecond / one).toFixed(2)} | ` +
      `${run.maxPerDestination} | ${run.inOrder ? "yes" : "no"} | ${run.crashes} |`,
  );
}
// The admin connection of test/helpers/database.ts stays open; nothing else is left running.
process.exit(0);
