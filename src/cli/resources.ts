// `herald workspaces list`, `herald destinations list` and `herald webhooks list|test`: the
// workspace's other resources as tables (or the API's JSON).
import { randomUUID } from "node:crypto";
import { call, list, resolveWorkspace } from "./api.ts";
import { flag, limitOf, PAGING, parseCommand, str } from "./args.ts";
import { connect } from "./credentials.ts";
import { CommandError, UsageError } from "./errors.ts";
import { openBrowser } from "./login.ts";
import { json, moreHint, table, time } from "./format.ts";

/** `herald workspaces --help`. */
export const WORKSPACES_HELP = `Usage: herald workspaces list [--limit N] [--after CURSOR] [--all] [--json]

Lists the workspaces the key can use: id, name, time zone, and which one commands use by default
(HERALD_WORKSPACE_ID, else the login's workspace; --workspace overrides it per command).`;

/** `herald destinations --help`. */
export const DESTINATIONS_HELP = `Usage: herald destinations list [--workspace ws_…] [--json]
       herald destinations connect CHANNEL [--instance URL] [--handle H --app-password P]
                                   [--no-browser] [--workspace ws_…] [--json]

list     Lists the workspace's destinations (connected social accounts): id, channel, name, status,
         and whether it is its channel's default (herald posts create --channel picks the default).
connect  Connects an account. OAuth networks (mastodon with --instance, x, threads, linkedin, …):
         opens the network's authorization page (or prints it) and waits until you approved it there.
         bluesky: --handle and --app-password (an app password from Bluesky's settings), at once.`;

/** How often `destinations connect` looks whether the authorization came back. */
const CONNECTION_POLL_MS = 2000;

/** `herald webhooks --help`. */
export const WEBHOOKS_HELP = `Usage: herald webhooks list [--limit N] [--after CURSOR] [--all] [--workspace ws_…] [--json]
       herald webhooks test ID [--workspace ws_…] [--json]

list   Lists the workspace's webhook endpoints: id, name, URL, enabled, event types (never secrets).
test   Queues a webhook.test event to endpoint ID and prints the delivery (herald sends it within
       about a second; its log is at GET /v1/workspaces/{ws}/webhook-endpoints/ID/deliveries).`;

/** Runs `herald workspaces …`. */
export async function runWorkspaces(args: string[]): Promise<string> {
  const [command, ...rest] = args;
  if (!command || command === "--help" || command === "-h" || command === "help") return WORKSPACES_HELP;
  if (command !== "list")
    throw new UsageError(`unknown workspaces command "${command}" (see herald workspaces --help)`);
  const p = parseCommand(rest, PAGING, [0, 0], "herald workspaces --help");
  if (flag(p, "help")) return WORKSPACES_HELP;
  const limit = limitOf(p);
  const config = await connect("any scope");
  const listing = await list(
    config,
    "/workspaces",
    {},
    { limit, after: str(p, "after"), all: flag(p, "all") },
  );
  if (flag(p, "json")) return json(listing);
  const only = listing.data.length === 1 && !listing.has_more && !str(p, "after");
  const rows = listing.data.map((w) => [
    w.id === config.workspaceId || (!config.workspaceId && only) ? "*" : "",
    w.id,
    w.name,
    w.time_zone,
    time(w.created_at),
  ]);
  return (
    table(["default", "id", "name", "time zone", "created"], rows, "No workspaces.") +
    moreHint(listing, "herald workspaces list")
  );
}

/** Runs `herald destinations …`. */
export async function runDestinations(args: string[]): Promise<string> {
  const [command, ...rest] = args;
  if (!command || command === "--help" || command === "-h" || command === "help") return DESTINATIONS_HELP;
  if (command === "connect") return connectDestination(rest);
  if (command !== "list")
    throw new UsageError(`unknown destinations command "${command}" (see herald destinations --help)`);
  const p = parseCommand(rest, { workspace: { type: "string" } }, [0, 0], "herald destinations --help");
  if (flag(p, "help")) return DESTINATIONS_HELP;
  const config = await connect("destinations:read");
  const workspace = await resolveWorkspace(config, str(p, "workspace"));
  const listing = await call(config, "GET", `/workspaces/${workspace}/destinations`);
  if (flag(p, "json")) return json(listing);
  const rows = listing.data.map((d: any) => [
    d.id,
    d.channel,
    d.display_name,
    d.unavailable_reason ? `${d.status} (${d.unavailable_reason})` : d.status,
    d.is_default,
  ]);
  return table(
    ["id", "channel", "name", "status", "default"],
    rows,
    `No destinations in ${workspace}: connect one with \`herald destinations connect <network>\` ` +
      `(see ${CONNECTING_DOCS}).`,
  );
}

/** Where connecting a network is described (a heading of the repository's docs; a test checks it exists). */
export const CONNECTING_DOCS = "docs/networks.md#what-every-network-has-in-common";

/** Runs `herald webhooks …`. */
export async function runWebhooks(args: string[]): Promise<string> {
  const [command, ...rest] = args;
  if (!command || command === "--help" || command === "-h" || command === "help") return WEBHOOKS_HELP;
  if (command === "list") {
    const p = parseCommand(
      rest,
      { workspace: { type: "string" }, ...PAGING },
      [0, 0],
      "herald webhooks --help",
    );
    if (flag(p, "help")) return WEBHOOKS_HELP;
    const limit = limitOf(p);
    const config = await connect("webhooks:read");
    const workspace = await resolveWorkspace(config, str(p, "workspace"));
    const listing = await list(
      config,
      `/workspaces/${workspace}/webhook-endpoints`,
      {},
      {
        limit,
        after: str(p, "after"),
        all: flag(p, "all"),
      },
    );
    if (flag(p, "json")) return json(listing);
    const rows = listing.data.map((e) => [e.id, e.name, e.url, e.enabled, e.event_types.join(",")]);
    return (
      table(["id", "name", "url", "enabled", "events"], rows, "No webhook endpoints.") +
      moreHint(listing, "herald webhooks list")
    );
  }
  if (command === "test") {
    const p = parseCommand(rest, { workspace: { type: "string" } }, [1, 1], "herald webhooks --help");
    if (flag(p, "help")) return WEBHOOKS_HELP;
    const config = await connect("webhooks:write");
    const workspace = await resolveWorkspace(config, str(p, "workspace"));
    const id = encodeURIComponent(p.positionals[0]!);
    const delivery = await call(
      config,
      "POST",
      `/workspaces/${workspace}/webhook-endpoints/${id}/test`,
      {},
      { idempotencyKey: randomUUID() },
    );
    if (flag(p, "json")) return json(delivery);
    return `${delivery.id} ${delivery.status}: ${delivery.event_type} event ${delivery.event_id} to ${delivery.endpoint_id}`;
  }
  throw new UsageError(`unknown webhooks command "${command}" (see herald webhooks --help)`);
}

/**
 * `herald destinations connect CHANNEL`: starts a connection session; an OAuth network's page is
 * opened (or printed on stderr) and the session polled until the network sent the person back.
 */
async function connectDestination(args: string[]): Promise<string> {
  const options = {
    workspace: { type: "string" },
    instance: { type: "string" },
    handle: { type: "string" },
    "app-password": { type: "string" },
    "no-browser": { type: "boolean" },
  } as const;
  const p = parseCommand(args, options, [1, 1], "herald destinations --help");
  if (flag(p, "help")) return DESTINATIONS_HELP;
  const config = await connect("destinations:write");
  const workspace = await resolveWorkspace(config, str(p, "workspace"));
  const body = {
    provider: p.positionals[0]!,
    instance_origin: str(p, "instance"),
    handle: str(p, "handle"),
    app_password: str(p, "app-password"),
  };
  const path = `/workspaces/${workspace}/destination-connections`;
  let session = await call(config, "POST", path, body, { idempotencyKey: randomUUID() });
  if (session.status === "pending") {
    const opened = openBrowser(session.authorization_url, process.env, flag(p, "no-browser"));
    process.stderr.write(
      `${opened ? "Opened" : "Open"} this page to authorize Herald on ${body.provider}:\n  ${session.authorization_url}\n` +
        "Waiting for the network to send you back, and for you to confirm on Herald's page…\n",
    );
    while (session.status === "pending") {
      await Bun.sleep(CONNECTION_POLL_MS);
      session = await call(config, "GET", `${path}/${encodeURIComponent(session.id)}`);
    }
  }
  if (session.status !== "completed")
    throw new CommandError(
      `connecting ${body.provider} ${session.status}${session.error ? `: ${session.error}` : ""}`,
    );
  if (flag(p, "json")) return json(session);
  return `Connected ${body.provider}: destination ${session.destination_id} (herald destinations list).`;
}
