import { randomUUID } from "node:crypto";
import { stat } from "node:fs/promises";
import { basename, extname } from "node:path";
import { combineCrc64Nvme, createCrc64Nvme, crc64nvmeToBase64 } from "../lib/crc64nvme.ts";
import { partCountFor, partLength, partSizeFor } from "../modules/assets/parts.ts";
import { ApiError, call, list, resolveWorkspace, type Target } from "./api.ts";
import { flag, limitOf, PAGING, parseCommand, str } from "./args.ts";
import { connect } from "./credentials.ts";
import { UsageError } from "./errors.ts";
import { bytes, json, moreHint, table, time, byteSize } from "./format.ts";

export { ApiError };

/** `herald assets --help`. */
export const ASSETS_HELP = `Usage: herald assets upload FILE [options]
       herald assets list [options]

upload   Uploads a media file to Herald: computes the CRC64NVME of every part, sends the parts in
         parallel (retrying failed ones), completes the upload and prints the asset.
         --kind card|video|poster   asset kind (default: video for video files, card otherwise)
         --content-type T           media type (default: from the file name: png, jpg, gif, webp, mp4, mov)

list     Lists the workspace's assets, newest first: id, type, status, label, media type, size,
         dimensions, created.
         --limit N, --after CURSOR, --all   page size (1-100, default 25), next page, every page

Both:
  --workspace ws_…           workspace (default: HERALD_WORKSPACE_ID, else the login's, else the key's only one)
  --json                     print the API's asset (upload) or listing (list) as JSON

Credentials: HERALD_API_KEY (with HERALD_API_URL), else the stored login (herald login); upload needs
assets:write, list assets:read.`;

/** Parts sent at the same time. */
const PARALLEL_PARTS = 4;
/** Tries per part (and for the completion) before giving up. */
const MAX_TRIES = 6;

const TYPES_BY_EXTENSION: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".mp4": "video/mp4",
  ".m4v": "video/mp4",
  ".mov": "video/quicktime",
};

/** Where progress goes: a terminal gets a redrawn bar, anything else plain lines. */
export interface ProgressSink {
  write(text: string): void;
  isTTY: boolean;
}

interface PartPlan {
  partNumber: number;
  start: number;
  length: number;
  checksum: string;
}

/** Upload progress: a bar with percentage and throughput on a TTY, a line per 10% otherwise. */
class Progress {
  private done = 0;
  private parts = 0;
  private lastDraw = 0;
  private lastStep = -1;
  private readonly started = performance.now();

  constructor(
    private readonly sink: ProgressSink,
    private readonly total: number,
    private readonly totalParts: number,
  ) {}

  partDone(bytes: number): void {
    this.done += bytes;
    this.parts++;
    this.draw(this.parts === this.totalParts);
  }

  private draw(final: boolean): void {
    const fraction = this.total === 0 ? 1 : this.done / this.total;
    const seconds = Math.max(0.001, (performance.now() - this.started) / 1000);
    const rate = `${byteSize(this.done / seconds)}/s`;
    if (this.sink.isTTY) {
      const now = performance.now();
      if (!final && now - this.lastDraw < 100) return;
      this.lastDraw = now;
      const width = 30;
      const filled = Math.round(fraction * width);
      const bar = "#".repeat(filled) + "-".repeat(width - filled);
      this.sink.write(
        `\r\x1b[2KUploading [${bar}] ${(fraction * 100).toFixed(0).padStart(3)}%  ${byteSize(this.done)} of ` +
          `${byteSize(this.total)}  ${rate}  ${this.parts}/${this.totalParts} parts${final ? "\n" : ""}`,
      );
      return;
    }
    const step = Math.floor(fraction * 10);
    if (step === this.lastStep && !final) return;
    this.lastStep = step;
    this.sink.write(
      `uploaded ${this.parts}/${this.totalParts} parts, ${byteSize(this.done)} of ${byteSize(this.total)} ` +
        `(${(fraction * 100).toFixed(0)}%), ${rate}\n`,
    );
  }
}

/**
 * Whether a failed attempt is worth another try (network trouble, the server's or store's bad moment, a
 * damaged part).
 */
function retryable(status: number | null): boolean {
  return status === null || status === 400 || status === 408 || status === 429 || status >= 500;
}

async function pause(attempt: number): Promise<void> {
  await Bun.sleep(Math.min(30_000, 500 * 2 ** (attempt - 1)) + Math.random() * 250);
}

/** Reads the file once, computing each part's CRC64NVME and the whole file's. */
async function planParts(
  path: string,
  size: number,
): Promise<{ partSize: number; parts: PartPlan[]; checksum: string }> {
  const partSize = partSizeFor(size);
  const count = partCountFor(size, partSize);
  const crc = await createCrc64Nvme();
  const parts: PartPlan[] = [];
  let whole = 0n;
  let part = 1;
  let left = partLength(size, partSize, 1);
  const finishPart = () => {
    const value = crc.digest();
    const length = partLength(size, partSize, part);
    whole = part === 1 ? value : combineCrc64Nvme(whole, value, length);
    parts.push({
      partNumber: part,
      start: (part - 1) * partSize,
      length,
      checksum: crc64nvmeToBase64(value),
    });
    crc.reset();
    part++;
    left = part <= count ? partLength(size, partSize, part) : 0;
  };
  for await (const chunk of Bun.file(path).stream()) {
    let offset = 0;
    while (offset < chunk.byteLength) {
      if (left === 0)
        throw new UsageError(`${path} grew while it was read; upload it again once it is complete`);
      const take = Math.min(left, chunk.byteLength - offset);
      crc.update(chunk.subarray(offset, offset + take));
      offset += take;
      left -= take;
      if (left === 0) finishPart();
    }
  }
  if (parts.length !== count)
    throw new UsageError(`${path} shrank while it was read; upload it again once it is complete`);
  return { partSize, parts, checksum: crc64nvmeToBase64(whole) };
}

/** Sends one part (from the file, never all of it in memory), retrying; returns its ETag. */
async function sendPart(
  path: string,
  part: PartPlan,
  target: { upload_url: string; required_headers: Record<string, string> },
): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    let status: number | null = null;
    let detail = "";
    try {
      const response = await fetch(target.upload_url, {
        method: "PUT",
        headers: target.required_headers,
        body: Bun.file(path).slice(part.start, part.start + part.length),
      });
      status = response.status;
      const text = await response.text();
      const etag = response.headers.get("etag");
      if (response.ok && etag) return etag;
      detail = response.ok
        ? "no ETag in the answer"
        : (() => {
            try {
              return JSON.parse(text).detail ?? `HTTP ${status}`;
            } catch {
              return `HTTP ${status}`;
            }
          })();
    } catch (error) {
      detail = (error as Error).message;
    }
    if (!retryable(status) || attempt >= MAX_TRIES)
      throw new ApiError(
        status ?? 0,
        `part ${part.partNumber} failed after ${attempt} ${attempt === 1 ? "try" : "tries"}: ${detail}`,
      );
    await pause(attempt);
  }
}

/** Runs `work` on every item with at most `limit` at a time; the first failure stops the rest. */
async function inParallel<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed: unknown = null;
  const worker = async () => {
    while (failed === null && next < items.length) {
      const item = items[next++]!;
      try {
        await work(item);
      } catch (error) {
        failed ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failed !== null) throw failed;
}

/** Describes a ready asset in one line. */
function describe(asset: any, file: string): string {
  const shape = asset.dimensions
    ? `${asset.dimensions}, ${asset.format}${asset.duration_sec ? `, ${asset.duration_sec} s` : ""}`
    : "not inspected";
  return (
    `${asset.id} ${asset.status}: ${basename(file)} (${asset.content_type}, ${shape}, ` +
    `${byteSize(asset.byte_size)}, crc64nvme ${asset.checksum?.value ?? "-"})`
  );
}

/** What `uploadAsset` needs to know about the file. */
export interface UploadRequest {
  path: string;
  kind?: string;
  contentType?: string;
}

/** Checks a file before an upload: readable, not empty, a known media type and kind. */
export async function checkUpload(
  request: UploadRequest,
): Promise<{ path: string; size: number; kind: string; contentType: string }> {
  const path = request.path;
  const info = await stat(path).catch(() => null);
  if (!info?.isFile()) throw new UsageError(`${path} is not a readable file`);
  if (info.size === 0) throw new UsageError(`${path} is empty`);
  const contentType = request.contentType ?? TYPES_BY_EXTENSION[extname(path).toLowerCase()];
  if (!contentType)
    throw new UsageError(`cannot tell the media type of ${basename(path)}; pass --content-type`);
  const kind = request.kind ?? (contentType.startsWith("video/") ? "video" : "card");
  if (!["card", "video", "poster"].includes(kind))
    throw new UsageError("--kind must be card, video or poster");
  return { path, size: info.size, kind, contentType };
}

/**
 * Uploads a checked file to a workspace (start, parts in parallel with `progress`, complete) and
 * returns the ready asset. Each step has its own Idempotency-Key, reused by that step's retries.
 */
export async function uploadAsset(
  config: Target,
  workspace: string,
  file: { path: string; size: number; kind: string; contentType: string },
  progress: ProgressSink,
): Promise<any> {
  const { path } = file;
  if (!progress.isTTY) progress.write(`computing checksums of ${basename(path)} (${byteSize(file.size)})\n`);
  const plan = await planParts(path, file.size);
  const started = await call(
    config,
    "POST",
    `/workspaces/${workspace}/asset-uploads`,
    {
      kind: file.kind,
      file_name: basename(path),
      content_type: file.contentType,
      byte_size: file.size,
      part_size: plan.partSize,
      parts: plan.parts.map((p) => ({ part_number: p.partNumber, checksum_crc64nvme: p.checksum })),
    },
    { idempotencyKey: randomUUID() },
  );

  const bar = new Progress(progress, file.size, plan.parts.length);
  const etags = new Map<number, string>();
  const targets = new Map<number, { upload_url: string; required_headers: Record<string, string> }>(
    started.parts.map((p: any) => [p.part_number, p]),
  );
  await inParallel(plan.parts, PARALLEL_PARTS, async (part) => {
    etags.set(part.partNumber, await sendPart(path, part, targets.get(part.partNumber)!));
    bar.partDone(part.length);
  });

  const body = {
    byte_size: file.size,
    checksum_crc64nvme: plan.checksum,
    parts: plan.parts.map((p) => ({
      part_number: p.partNumber,
      etag: etags.get(p.partNumber)!,
      checksum_crc64nvme: p.checksum,
    })),
  };
  const key = randomUUID();
  for (let attempt = 1; ; attempt++) {
    try {
      return await call(
        config,
        "POST",
        `/workspaces/${workspace}/asset-uploads/${started.id}/complete`,
        body,
        { idempotencyKey: key, tries: 1 },
      );
    } catch (error) {
      // The same key replays a finished completion, so network trouble and 5xx are safe to retry, and
      // so is waiting for a first try that is still assembling (outcome unknown, or "being completed").
      const api = error instanceof ApiError ? error : null;
      const again =
        api === null ||
        api.status === 0 ||
        api.status >= 500 ||
        api.retryable ||
        api.code === "public_idempotency_outcome_unknown";
      if (!again || attempt >= MAX_TRIES) throw error;
      await pause(attempt);
    }
  }
}

/** `herald assets upload FILE`: returns what to print on stdout. */
async function upload(args: string[], progress: ProgressSink): Promise<string> {
  const p = parseCommand(
    args,
    { kind: { type: "string" }, "content-type": { type: "string" }, workspace: { type: "string" } },
    [0, 100],
    "herald assets --help",
  );
  if (flag(p, "help")) return ASSETS_HELP;
  if (p.positionals.length !== 1) throw new UsageError("give exactly one FILE (see herald assets --help)");
  const file = await checkUpload({
    path: p.positionals[0]!,
    kind: str(p, "kind"),
    contentType: str(p, "content-type"),
  });
  const config = await connect("assets:write");
  const workspace = await resolveWorkspace(config, str(p, "workspace"));
  const asset = await uploadAsset(config, workspace, file, progress);
  return flag(p, "json") ? json(asset) : describe(asset, file.path);
}

/** `herald assets list`: the workspace's assets as a table, or the listing as JSON. */
async function listAssets(args: string[]): Promise<string> {
  const p = parseCommand(args, { workspace: { type: "string" }, ...PAGING }, [0, 0], "herald assets --help");
  if (flag(p, "help")) return ASSETS_HELP;
  const limit = limitOf(p);
  const config = await connect("assets:read");
  const workspace = await resolveWorkspace(config, str(p, "workspace"));
  const listing = await list(
    config,
    `/workspaces/${workspace}/assets`,
    {},
    {
      limit,
      after: str(p, "after"),
      all: flag(p, "all"),
    },
  );
  if (flag(p, "json")) return json(listing);
  const rows = listing.data.map((a) => [
    a.id,
    a.type,
    a.status,
    a.label,
    a.content_type,
    bytes(a.byte_size),
    a.dimensions,
    time(a.created_at),
  ]);
  return (
    table(
      ["id", "type", "status", "label", "content type", "size", "dimensions", "created"],
      rows,
      "No assets.",
    ) + moreHint(listing, "herald assets list")
  );
}

/** Runs `herald assets …`; returns the text to print on stdout (progress goes to `progress`). */
export async function runAssets(
  args: string[],
  progress: ProgressSink = {
    write: (t) => void process.stderr.write(t),
    isTTY: Boolean(process.stderr.isTTY),
  },
): Promise<string> {
  const [command, ...rest] = args;
  if (!command || command === "--help" || command === "-h" || command === "help") return ASSETS_HELP;
  if (command === "upload") return upload(rest, progress);
  if (command === "list") return listAssets(rest);
  throw new UsageError(`unknown assets command "${command}" (see herald assets --help)`);
}
