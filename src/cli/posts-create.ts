// `herald posts create` and `herald posts validate`: the Create Post body from the command line
// (text from arguments, a file or stdin; destinations from channels; media uploaded first), sent
// with one Idempotency-Key per invocation (create) or checked without storing anything (validate).
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { LOCAL_DATE_TIME, localTimeInZone } from "../lib/local-time.ts";
import { CHANNELS } from "../providers/types.ts";
import { call, request, resolveWorkspace, type Target } from "./api.ts";
import { flag, many, parseCommand, str, type Parsed } from "./args.ts";
import { checkUpload, uploadAsset, type ProgressSink } from "./assets.ts";
import { connect } from "./credentials.ts";
import { CommandError, UsageError } from "./errors.ts";
import { type CommandOutput, json, table, time } from "./format.ts";
import { CREATE_HELP, VALIDATE_HELP } from "./posts-help.ts";
import { confirm } from "./prompt.ts";

/** An ISO 8601 time with a UTC offset, as --when and reschedule take it. */
export const EXACT_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;
const GROUP = /^[A-Za-z0-9_-]{1,200}$/;
const ASSET_ID = /^ast_[0-9a-z]+$/i;

const CREATE_OPTIONS = {
  when: { type: "string" },
  channel: { type: "string", multiple: true },
  destination: { type: "string", multiple: true },
  media: { type: "string", multiple: true },
  "first-comment": { type: "string" },
  group: { type: "string" },
  "time-zone": { type: "string" },
  "recycle-every": { type: "string" },
  "recycle-count": { type: "string" },
  "recycle-variation": { type: "string", multiple: true },
  file: { type: "string" },
  yes: { type: "boolean", short: "y" },
  "no-link-tracking": { type: "boolean" },
  workspace: { type: "string" },
} as const;

/** Thread items from a file's text: `---` lines separate them; blank items are dropped. */
export function splitItems(text: string): string[] {
  return text
    .split(/^---[ \t]*$/m)
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

/** The body items: the arguments, or a file's (or stdin's) items. */
async function bodyItems(p: Parsed, help: string): Promise<string[]> {
  const file = str(p, "file");
  const stdin = p.positionals.length === 1 && p.positionals[0] === "-";
  if (file !== undefined && p.positionals.length > 0)
    throw new UsageError("give the text as arguments or with --file, not both");
  let items = p.positionals;
  const source = file ?? (stdin ? "-" : undefined);
  if (source !== undefined) {
    const text =
      source === "-"
        ? await Bun.stdin.text()
        : await readFile(source, "utf8").catch(() => {
            throw new UsageError(`${source} is not a readable file`);
          });
    items = splitItems(text);
  }
  if (items.length === 0)
    throw new UsageError(
      `give the post's text: arguments (one per thread item), --file FILE or - (see ${help})`,
    );
  if (items.some((item) => item.trim() === "")) throw new UsageError("a thread item is empty");
  return items;
}

/**
 * An exact time as the API takes it (ISO 8601 with a UTC offset): given so, or a local date and
 * time read in `--time-zone` (a time the zone skips is refused; one it has twice is the first).
 * Null when `value` is neither form; a local time without a zone is a usage error saying what to add.
 */
export function exactTimeOf(value: string, zone: string | undefined, name: string): string | null {
  if (EXACT_TIME.test(value) && !Number.isNaN(Date.parse(value))) return value;
  if (!LOCAL_DATE_TIME.test(value)) return null;
  if (zone === undefined)
    throw new UsageError(
      `${name} ${value} has no UTC offset: add one (like ${value}+01:00) or give --time-zone ` +
        "(like --time-zone Europe/Berlin) to read it in that zone",
    );
  const zoned = localTimeInZone(value, zone);
  if (!zoned.ok) throw new UsageError(`${name}: ${zoned.detail}; choose another time or give a UTC offset`);
  return zoned.iso;
}

/** `--when` checked: now, draft, queue, or an exact time (with a UTC offset, or local with --time-zone). */
function whenOf(p: Parsed): string {
  const when = str(p, "when") ?? "now";
  if (["now", "draft", "queue"].includes(when)) return when;
  const exact = exactTimeOf(when, str(p, "time-zone"), "--when");
  if (exact !== null) return exact;
  throw new UsageError(
    `--when must be now, draft, queue or an ISO 8601 time with a UTC offset (e.g. ` +
      `2026-03-02T09:00:00+01:00) or without one and --time-zone, got ${JSON.stringify(when)}`,
  );
}

/** A new group value: `cli-<UTC date and time>-<4 random hex>`. */
function newGroup(): string {
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "")
    .replace("T", "-");
  return `cli-${stamp}-${randomBytes(2).toString("hex")}`;
}

/** Where one post goes: the request item's reference and a name for people. */
interface PostTarget {
  ref: { destination_id: string } | { channel: string };
  channel: string;
  label: string;
}

/**
 * The destinations of a create: each --destination as given, each --channel the workspace's default
 * destination of that channel (else its only one; a draft may name the bare channel), and with
 * neither the workspace's only destination.
 */
async function targetsOf(
  config: Target,
  workspace: string,
  channels: string[],
  destinationIds: string[],
  draft: boolean,
): Promise<PostTarget[]> {
  for (const channel of channels)
    if (!(CHANNELS as readonly string[]).includes(channel))
      throw new UsageError(`--channel must be one of ${CHANNELS.join(", ")}; got ${JSON.stringify(channel)}`);
  const all: any[] = (await call(config, "GET", `/workspaces/${workspace}/destinations`)).data;
  const name = (d: any) => `${d.display_name} (${d.id})`;
  const targets: PostTarget[] = [];
  for (const id of destinationIds) {
    const known = all.find((d) => d.id === id);
    targets.push({
      ref: { destination_id: id },
      channel: known?.channel ?? "?",
      label: known ? name(known) : id,
    });
  }
  for (const channel of channels) {
    const candidates = all.filter((d) => d.channel === channel);
    const chosen = candidates.find((d) => d.is_default) ?? (candidates.length === 1 ? candidates[0] : null);
    if (chosen) targets.push({ ref: { destination_id: chosen.id }, channel, label: name(chosen) });
    else if (candidates.length === 0 && draft) targets.push({ ref: { channel }, channel, label: channel });
    else if (candidates.length === 0)
      throw new CommandError(`workspace ${workspace} has no ${channel} destination; connect one first`);
    else
      throw new UsageError(
        `workspace ${workspace} has ${candidates.length} ${channel} destinations and no default; choose ` +
          `one with --destination (${candidates.map((d) => d.id).join(", ")})`,
      );
  }
  if (targets.length > 0) return targets;
  if (all.length === 1)
    return [{ ref: { destination_id: all[0].id }, channel: all[0].channel, label: name(all[0]) }];
  if (all.length === 0)
    throw new CommandError(`workspace ${workspace} has no destinations; connect one first`);
  throw new UsageError(
    `workspace ${workspace} has ${all.length} destinations: choose with --channel or --destination (herald destinations list)`,
  );
}

/** --media split into files to upload (checked now) and asset ids to attach as they are. */
async function mediaOf(p: Parsed, uploads: boolean) {
  const files: Awaited<ReturnType<typeof checkUpload>>[] = [];
  const assetIds: string[] = [];
  for (const value of many(p, "media")) {
    if (ASSET_ID.test(value) && !existsSync(value)) assetIds.push(value);
    else if (!uploads)
      throw new UsageError(`--media takes asset ids (ast_…) here; upload ${value} with herald assets upload`);
    else files.push(await checkUpload({ path: value }));
  }
  return { files, assetIds };
}

/**
 * `recycle` from --recycle-every DAYS and --recycle-count N (both or neither) and each
 * --recycle-variation TEXT (a copy's text, in turn); the API checks the ranges.
 */
function recycleOf(p: Parsed): Record<string, unknown> | undefined {
  const every = str(p, "recycle-every");
  const count = str(p, "recycle-count");
  const variations = many(p, "recycle-variation");
  if (every === undefined && count === undefined) {
    if (variations.length)
      throw new UsageError("--recycle-variation needs --recycle-every and --recycle-count");
    return undefined;
  }
  if (every === undefined || count === undefined)
    throw new UsageError("recycling takes both --recycle-every DAYS and --recycle-count N");
  const whole = (name: string, value: string) => {
    if (!/^\d{1,6}$/.test(value)) throw new UsageError(`--${name} must be a whole number, got ${value}`);
    return Number(value);
  };
  return {
    every_days: whole("recycle-every", every),
    count: whole("recycle-count", count),
    ...(variations.length ? { variations: variations.map((text) => [text]) } : {}),
  };
}

/** The question asked before publishing or scheduling. */
function question(when: string, targets: PostTarget[], items: number): string {
  const where = targets.map((t) => t.label).join(", ");
  const what = items === 1 ? "the post" : `the ${items}-item thread`;
  if (when === "now") return `Publish ${what} now to ${where}?`;
  if (when === "queue") return `Add ${what} to the queue of ${where}?`;
  return `Schedule ${what} for ${when} on ${where}?`;
}

/** The parts of a Create Post body every create-like command builds. */
async function createBody(p: Parsed, config: Target, workspace: string, help: string) {
  const items = await bodyItems(p, help);
  const when = whenOf(p);
  const group = str(p, "group") ?? newGroup();
  if (!GROUP.test(group)) throw new UsageError("--group must be 1-200 letters, digits, _ or -");
  const timeZone = str(p, "time-zone");
  if (timeZone !== undefined && when === "queue")
    throw new UsageError("--time-zone does not apply to --when queue (the workspace's zone is used)");
  const targets = await targetsOf(
    config,
    workspace,
    many(p, "channel"),
    many(p, "destination"),
    when === "draft",
  );
  const firstComment = str(p, "first-comment");
  if (firstComment !== undefined && firstComment.trim() === "")
    throw new UsageError("--first-comment needs the comment's text");
  return {
    items,
    when,
    group,
    timeZone,
    targets,
    untracked: flag(p, "no-link-tracking"),
    recycle: recycleOf(p),
    firstComment,
  };
}

/** The Create Post body for `targets`, with `media` attached to the first item of each. */
function requestBody(
  parts: {
    items: string[];
    when: string;
    group: string;
    timeZone?: string;
    targets: PostTarget[];
    untracked: boolean;
    recycle?: Record<string, unknown>;
    firstComment?: string;
  },
  media: string[],
) {
  const recycle = parts.recycle ? { recycle: parts.recycle } : {};
  // The first comment goes in each post's own options (a network without first comments answers 400).
  const options = (channel: string) =>
    parts.firstComment === undefined
      ? {}
      : { destination_options: { [channel]: { first_comment: parts.firstComment } } };
  return {
    when: parts.when,
    ...(parts.when === "draft" ? {} : { confirmed: true }),
    ...(parts.timeZone ? { time_zone: parts.timeZone } : {}),
    group: parts.group,
    posts: parts.targets.map((t) => ({
      ...t.ref,
      body: parts.items,
      ...(media.length ? { media } : {}),
      ...(parts.untracked ? { link_tracking: false } : {}),
      ...recycle,
      ...options(t.channel),
    })),
  };
}

/** Posts as a table: id, channel, destination, state, scheduled. */
export function postsTable(posts: any[]): string {
  return table(
    ["id", "channel", "destination", "state", "scheduled", "published"],
    posts.map((post) => [
      post.id,
      post.channel,
      post.destination?.display_name ?? post.destination_id,
      post.state,
      time(post.scheduled_at),
      time(post.published_at),
    ]),
    "No posts.",
  );
}

/** `herald posts create`: returns what to print on stdout. */
export async function createPosts(args: string[], progress: ProgressSink): Promise<string> {
  const p = parseCommand(args, CREATE_OPTIONS, [0, 100], "herald posts create --help");
  if (flag(p, "help")) return CREATE_HELP;
  const media = await mediaOf(p, true);
  const config = await connect("posts:write (and assets:write for --media)");
  const workspace = await resolveWorkspace(config, str(p, "workspace"));
  const parts = await createBody(p, config, workspace, "herald posts create --help");
  if (parts.when !== "draft")
    await confirm(question(parts.when, parts.targets, parts.items.length), flag(p, "yes"));
  const assetIds = [...media.assetIds];
  for (const file of media.files) assetIds.push((await uploadAsset(config, workspace, file, progress)).id);
  const answer = await request(
    config,
    "POST",
    `/workspaces/${workspace}/posts`,
    requestBody(parts, assetIds),
    { idempotencyKey: randomUUID() },
  );
  const set = answer.body;
  if (flag(p, "json")) return json(set);
  const lines = [`group ${set.group}`, postsTable(set.posts)];
  if (answer.status === 202)
    lines.push(
      `Publishing continues on the networks; follow it with: herald posts list --group ${set.group}`,
    );
  return lines.join("\n");
}

/** `herald posts validate`: valid (exit 0), or the problems (exit 1). */
export async function validatePosts(args: string[]): Promise<CommandOutput> {
  const p = parseCommand(args, CREATE_OPTIONS, [0, 100], "herald posts validate --help");
  if (flag(p, "help")) return VALIDATE_HELP;
  const media = await mediaOf(p, false);
  const config = await connect("posts:read");
  const workspace = await resolveWorkspace(config, str(p, "workspace"));
  const parts = await createBody(p, config, workspace, "herald posts validate --help");
  const result = await call(
    config,
    "POST",
    `/workspaces/${workspace}/posts/validate`,
    requestBody(parts, media.assetIds),
  );
  const exitCode = result.valid ? 0 : 1;
  if (flag(p, "json")) return { stdout: json(result), exitCode };
  const what = parts.items.length === 1 ? "the post" : `the ${parts.items.length}-item thread`;
  const warnings: any[] = result.warnings ?? [];
  if (result.valid && warnings.length === 0)
    return `valid: ${parts.targets.map((t) => t.label).join(", ")} would accept ${what}`;
  const findings = (list: any[]) =>
    table(
      ["pointer", "channel", "code", "detail"],
      list.map((e) => [e.pointer, e.channel, e.code, e.detail]),
      "",
    );
  // A draft is stored with these; they are what publishing it would refuse.
  const warned = `publishing ${what} would be refused (warnings):\n${findings(warnings)}`;
  if (result.valid) return `valid as a draft, but ${warned}`;
  const refused = `not valid:\n${findings(result.errors)}`;
  return { stdout: warnings.length ? `${refused}\n${warned}` : refused, exitCode };
}
