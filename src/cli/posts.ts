// `herald posts …`: list, get, cancel, retry and reschedule here; create and validate in
// posts-create.ts, import in posts-import.ts. Every action carries one Idempotency-Key per invocation, so the command's own
// retries never act twice.
import { randomUUID } from "node:crypto";
import { call, list, resolveWorkspace } from "./api.ts";
import { flag, limitOf, PAGING, parseCommand, str } from "./args.ts";
import type { ProgressSink } from "./assets.ts";
import { connect } from "./credentials.ts";
import { UsageError } from "./errors.ts";
import { clip, type CommandOutput, fields, json, moreHint, table, time } from "./format.ts";
import { createPosts, exactTimeOf, validatePosts } from "./posts-create.ts";
import { importPosts } from "./posts-import.ts";
import { GET_HELP, HELPS, LIST_HELP, postsHelp } from "./posts-help.ts";
import { confirm } from "./prompt.ts";

export { postsHelp };

async function listPosts(args: string[]): Promise<string> {
  const p = parseCommand(
    args,
    {
      view: { type: "string" },
      state: { type: "string" },
      channel: { type: "string" },
      group: { type: "string" },
      destination: { type: "string" },
      workspace: { type: "string" },
      ...PAGING,
    },
    [0, 0],
    "herald posts list --help",
  );
  if (flag(p, "help")) return LIST_HELP;
  const limit = limitOf(p);
  const config = await connect("posts:read");
  const workspace = await resolveWorkspace(config, str(p, "workspace"));
  const listing = await list(
    config,
    `/workspaces/${workspace}/posts`,
    {
      view: str(p, "view"),
      state: str(p, "state"),
      channel: str(p, "channel"),
      group: str(p, "group"),
      destination_id: str(p, "destination"),
    },
    { limit, after: str(p, "after"), all: flag(p, "all") },
  );
  if (flag(p, "json")) return json(listing);
  const rows = listing.data.map((post) => [
    post.id,
    post.group,
    post.channel,
    post.state,
    time(post.scheduled_at),
    time(post.published_at),
    clip(post.payload?.body?.[0] ?? ""),
  ]);
  return (
    table(["id", "group", "channel", "state", "scheduled", "published", "text"], rows, "No posts.") +
    moreHint(listing, "herald posts list")
  );
}

/** One post for people: its fields, then its items, links and attempts. */
function describePost(post: any, links: any[] = []): string {
  const error = post.last_error ? `${post.last_error.code}: ${post.last_error.message}` : null;
  const blocks = [
    fields([
      ["id", post.id],
      ["group", post.group],
      ["channel", post.channel],
      ["state", `${post.state}${post.action_required ? " (needs action)" : ""}`],
      [
        "destination",
        post.destination ? `${post.destination.display_name} (${post.destination_id})` : post.destination_id,
      ],
      ["scheduled", time(post.scheduled_at)],
      ["published", time(post.published_at)],
      ["created", time(post.created_at)],
      ["attempts", post.attempt_count],
      ["last error", error],
      ...(post.recycle ? [["recycling", recycling(post)] as [string, string]] : []),
      ...(post.recycled_from
        ? [["recycled from", `${post.recycled_from} (copy ${post.recycle_number})`] as [string, string]]
        : []),
      ["actions", post.available_actions?.join(", ")],
    ]),
    table(
      ["item", "text"],
      (post.payload?.body ?? []).map((text: string, i: number) => [i + 1, clip(text, 100)]),
      "",
    ),
  ];
  if (post.receipts?.length)
    blocks.push(
      table(
        ["item", "link"],
        post.receipts.map((r: any) =>
          r.kind === "first_comment"
            ? ["first comment", r.url ?? (r.error ? `${r.state}: ${r.error.message}` : r.state)]
            : [r.item_index + 1, r.url],
        ),
        "",
      ),
    );
  if (links.length)
    blocks.push(
      table(
        ["short link", "clicks", "leads to"],
        links.map((l: any) => [l.short_url, l.clicks, clip(l.target, 80)]),
        "",
      ),
    );
  if (post.attempts?.length)
    blocks.push(
      table(
        ["attempt", "trigger", "status", "started", "error"],
        post.attempts.map((a: any) => [
          a.number,
          a.trigger,
          a.status,
          time(a.started_at),
          a.error ? `${a.error.code}: ${a.error.message}` : null,
        ]),
        "",
      ),
    );
  return blocks.filter((b) => b !== "").join("\n\n");
}

async function getPost(args: string[]): Promise<string> {
  const p = parseCommand(
    args,
    { attempts: { type: "boolean" }, workspace: { type: "string" } },
    [1, 1],
    "herald posts get --help",
  );
  if (flag(p, "help")) return GET_HELP;
  const config = await connect("posts:read");
  const workspace = await resolveWorkspace(config, str(p, "workspace"));
  const id = encodeURIComponent(p.positionals[0]!);
  const post = await call(
    config,
    "GET",
    `/workspaces/${workspace}/posts/${id}${flag(p, "attempts") ? "?include=attempts" : ""}`,
  );
  if (flag(p, "json")) return json(post);
  const links = post.link_tracking
    ? (await call(config, "GET", `/workspaces/${workspace}/posts/${id}/links`)).data
    : [];
  return describePost(post, links);
}

/** cancel, retry, reschedule: confirm, then one keyed POST; prints the post's new state. */
async function action(verb: "cancel" | "retry" | "reschedule", args: string[]): Promise<string> {
  const help = `herald posts ${verb} --help`;
  const p = parseCommand(
    args,
    {
      yes: { type: "boolean", short: "y" },
      workspace: { type: "string" },
      ...(verb === "cancel" ? {} : { "acknowledge-duplicate-risk": { type: "boolean" } }),
      ...(verb === "reschedule" ? { "time-zone": { type: "string" } } : {}),
    },
    verb === "reschedule" ? [2, 2] : [1, 1],
    help,
  );
  if (flag(p, "help")) return HELPS[verb]!;
  const [id, given] = p.positionals as [string, string | undefined];
  const at = given === undefined ? undefined : exactTimeOf(given, str(p, "time-zone"), "TIME");
  if (at === null)
    throw new UsageError(
      "TIME must be an ISO 8601 time with a UTC offset, or without one and --time-zone, got " +
        JSON.stringify(given),
    );
  const body: Record<string, unknown> = { confirmed: true };
  if (flag(p, "acknowledge-duplicate-risk")) body.acknowledge_duplicate_risk = true;
  if (at !== undefined) body.scheduled_at = at;
  if (str(p, "time-zone")) body.time_zone = str(p, "time-zone");
  const config = await connect("posts:write");
  const workspace = await resolveWorkspace(config, str(p, "workspace"));
  const questions = {
    cancel: `Cancel post ${id}?`,
    retry: `Send post ${id} again?`,
    reschedule: `Move post ${id} to ${at}?`,
  };
  await confirm(questions[verb], flag(p, "yes"));
  const post = await call(
    config,
    "POST",
    `/workspaces/${workspace}/posts/${encodeURIComponent(id)}/${verb}`,
    body,
    { idempotencyKey: randomUUID() },
  );
  if (flag(p, "json")) return json(post);
  return `${post.id} ${post.state}${post.scheduled_at && !post.terminal ? ` for ${time(post.scheduled_at)}` : ""}`;
}

/** Runs `herald posts …`; returns what to print on stdout (upload progress goes to `progress`). */
export async function runPosts(
  args: string[],
  progress: ProgressSink = {
    write: (t) => void process.stderr.write(t),
    isTTY: Boolean(process.stderr.isTTY),
  },
): Promise<CommandOutput> {
  const [command, ...rest] = args;
  switch (command) {
    case undefined:
    case "help":
    case "--help":
    case "-h":
      return postsHelp(rest[0]);
    case "create":
      return createPosts(rest, progress);
    case "validate":
      return validatePosts(rest);
    case "import":
      return importPosts(rest);
    case "list":
      return listPosts(rest);
    case "get":
      return getPost(rest);
    case "cancel":
    case "retry":
    case "reschedule":
      return action(command, rest);
    default:
      throw new UsageError(`unknown posts command "${command}" (see herald posts --help)`);
  }
}

/** An original's recycling in one line: the plan, copies published, the next copy. */
function recycling(post: any): string {
  const r = post.recycle;
  const next = r.next_copy_id ? `; next ${r.next_copy_id} at ${time(r.next_copy_at)}` : "";
  return `${r.count} copies every ${r.every_days} days, ${r.copies_published} published${next}`;
}
