// Publishing throughput of 1, 2 and 3 `herald serve` processes on one PostgreSQL database: each run
// is a fresh cluster (test/scale/cluster.ts) whose posts are all due at one moment; the rate is
// posts over the time from that moment to the last publication. The numbers docs/scaling.md quotes.
//
//   HERALD_DATABASE_URL=postgres://postgres@127.0.0.1:55432/postgres \
//     node_modules/.bin/bun test/scale/throughput.ts [posts=600] [network delay ms=0]
import { cpus } from "node:os";
import { measureThroughput } from "./cluster.ts";

const posts = Number(process.argv[2] ?? 600);
const networkDelayMs = Number(process.argv[3] ?? 0);
if (!process.env.HERALD_DATABASE_URL) {
  console.error("set HERALD_DATABASE_URL to a PostgreSQL admin URL (test/helpers/database.ts)");
  process.exit(2);
}

console.log(
  `${posts} posts due at once, one Mastodon destination (fake, ${networkDelayMs} ms per request), ` +
    `${cpus().length} cores, Bun ${Bun.version}`,
);
console.log("| processes | seconds from due time to last publication | posts/s | crashes logged |");
console.log("|---|---|---|---|");
for (const processes of [1, 2, 3]) {
  const run = await measureThroughput(processes, posts, { networkDelayMs });
  console.log(`| ${processes} | ${run.seconds.toFixed(2)} | ${run.perSecond.toFixed(1)} | ${run.crashes} |`);
}
// The admin connection of test/helpers/database.ts stays open; nothing else is left running.
process.exit(0);
