// `herald analytics GROUP`: a published group's totals from a running Herald, as a table or JSON.
import { parseArgs } from "node:util";
import { ConfigError, loadClientConfig } from "../config.ts";
import { METRICS } from "../providers/types.ts";
import { UsageError } from "./admin.ts";
import { call, resolveWorkspace } from "./api.ts";

export const ANALYTICS_HELP = `Usage: herald analytics GROUP [options]

Prints the totals of a published post group: each metric with how many of the group's posts the
networks reported it for, and how many failed their last read.

Options:
  --workspace ws_…   workspace (default: HERALD_WORKSPACE_ID, else the key's only workspace)
  --refresh          ask the networks for fresh numbers first (rate-limited per workspace)
  --json             print the API's post_group_analytics object instead of the table

Needs HERALD_API_KEY (a key with posts:read; --refresh needs posts:write) and HERALD_API_URL
(default HERALD_BASE_URL, else http://127.0.0.1:8080).`;

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
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: {
        workspace: { type: "string" },
        refresh: { type: "boolean" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return ANALYTICS_HELP;
  if (positionals.length !== 1) throw new UsageError("give exactly one GROUP (see herald analytics --help)");
  const client = loadClientConfig();
  if (!client.apiKey) throw new ConfigError("HERALD_API_KEY is required (an API key with posts:read)");
  const config = { ...client, apiKey: client.apiKey };
  const workspace = await resolveWorkspace(config, values.workspace);
  const path = `/workspaces/${workspace}/analytics/post-groups/${encodeURIComponent(positionals[0]!)}`;
  const analytics = values.refresh
    ? await call(config, "POST", `${path}/refresh`)
    : await call(config, "GET", path);
  return values.json ? JSON.stringify(analytics, null, 2) : totalsTable(analytics);
}
