// `herald analytics GROUP`: a published group's totals from a running Herald, as a table or JSON.
import { METRICS } from "../providers/types.ts";
import { call, resolveWorkspace } from "./api.ts";
import { flag, parseCommand, str } from "./args.ts";
import { connect } from "./credentials.ts";
import { UsageError } from "./errors.ts";
import { json } from "./format.ts";

export const ANALYTICS_HELP = `Usage: herald analytics GROUP [options]

Prints the totals of a published post group: each metric with how many of the group's posts the
networks reported it for, and how many failed their last read.

Options:
  --workspace ws_…   workspace (default: HERALD_WORKSPACE_ID, else the login's, else the key's only one)
  --refresh          ask the networks for fresh numbers first (rate-limited per workspace)
  --json             print the API's post_group_analytics object instead of the table

Credentials: HERALD_API_KEY (with HERALD_API_URL), else the stored login (herald login); a key with
posts:read (--refresh needs posts:write).`;

/** The totals as an aligned table: metric, value, posts with it, failed. */
export function totalsTable(analytics: {
  group: string;
  totals: Record<string, { value: number; coverage: Record<string, number> }>;
}): string {
  const rows = [["metric", "value", "reported by", "failed"]];
  for (const metric of METRICS) {
    const { value, coverage } = analytics.totals[metric]!;
    rows.push([
      metric,
      value.toLocaleString("en-US"),
      `${coverage.fetched_posts} of ${coverage.total_posts} posts`,
      String(coverage.failed_posts),
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ");
  return [`group ${analytics.group}`, ...rows.map(line)].join("\n");
}

/** Runs `herald analytics …`; returns what to print. */
export async function runAnalytics(args: string[]): Promise<string> {
  const p = parseCommand(
    args,
    { workspace: { type: "string" }, refresh: { type: "boolean" } },
    [0, 100],
    "herald analytics --help",
  );
  if (flag(p, "help")) return ANALYTICS_HELP;
  if (p.positionals.length !== 1)
    throw new UsageError("give exactly one GROUP (see herald analytics --help)");
  const config = await connect("posts:read");
  const workspace = await resolveWorkspace(config, str(p, "workspace"));
  const path = `/workspaces/${workspace}/analytics/post-groups/${encodeURIComponent(p.positionals[0]!)}`;
  const analytics = flag(p, "refresh")
    ? await call(config, "POST", `${path}/refresh`)
    : await call(config, "GET", path);
  return flag(p, "json") ? json(analytics) : totalsTable(analytics);
}
