import { ProblemError } from "../../core/problem.ts";
import { readJsonBody } from "../body-limit.ts";
import { receivePart } from "../../modules/assets/service.ts";
import { type ApiAnswer, problemOf } from "./api.ts";
import type { Asset, AssetUpload, Problem } from "./api-resources.ts";
import { BodyTooLarge, readRawFile, type ReceivedFile } from "./multipart.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";

/**
 * The largest file the dashboard takes through its own routes (a form without the script, or the
 * script's fallback when part URLs are on another origin): it is held on disk while it goes on to the
 * API. With the script and same-origin part URLs, files go straight to the API's part URLs instead.
 */
export const DASHBOARD_UPLOAD_MAX_BYTES = 32 * 1024 * 1024;

/** What storing a file as an asset gave: the asset, or the API's refusal. */
export type StoredAsset =
  | { ok: true; asset: Asset }
  | { ok: false; status: number; problem: Partial<Problem> };

/** The API's asset kind for a media type. */
export function kindOf(contentType: string): "video" | "card" {
  return contentType.toLowerCase().startsWith("video/") ? "video" : "card";
}

const failure = (status: number, detail: string): StoredAsset => ({ ok: false, status, problem: { detail } });

/** The API's refusal of a step of the upload. */
const refusedBy = (answer: ApiAnswer<unknown>): StoredAsset => ({
  ok: false,
  status: answer.status,
  problem: problemOf(answer) ?? {},
});

/**
 * Sends one part's bytes to its upload URL: Herald's own part URL is received in-process (the same
 * function that serves `PUT /uploads/...`), another origin (S3) over HTTP with its required headers.
 */
async function sendPart(
  r: DashboardRequest,
  file: ReceivedFile,
  part: { part_number: number; upload_url: string; required_headers: Record<string, string> },
  range: { start: number; end: number },
): Promise<{ etag: string } | { status: number; detail: string }> {
  const bytes = Bun.file(file.path).slice(range.start, range.end);
  const url = new URL(part.upload_url);
  const own = new URL(r.h.config.baseUrl);
  const local = /^\/uploads\/([^/]+)\/parts\/(\d+)$/.exec(url.pathname);
  if (url.origin === own.origin && local) {
    try {
      const request = new Request(url.href, {
        method: "PUT",
        headers: { "content-length": String(range.end - range.start) },
        body: bytes.stream(),
      });
      const query = {
        expires: url.searchParams.get("expires") ?? "",
        signature: url.searchParams.get("signature") ?? "",
      };
      return await receivePart(r.h, local[1]!, local[2]!, query, request);
    } catch (error) {
      if (error instanceof ProblemError) return { status: error.status, detail: error.detail };
      throw error;
    }
  }
  const response = await fetch(url, { method: "PUT", headers: part.required_headers, body: bytes });
  const etag = response.headers.get("etag");
  await response.body?.cancel().catch(() => {});
  return response.ok && etag ? { etag } : { status: 502, detail: `the storage answered ${response.status}` };
}

/**
 * Makes an asset of a file on disk through the API's multipart flow, as the signed-in person: start
 * the upload, send each part, complete. `idempotencyKey` (from the form) makes a resubmitted form
 * replay the same upload instead of making a second asset.
 */
export async function storeAsset(
  r: DashboardRequest,
  file: ReceivedFile,
  idempotencyKey: string,
): Promise<StoredAsset> {
  const base = `/workspaces/${r.workspace!.id}/asset-uploads`;
  const started = await r.api.call<AssetUpload>("POST", base, {
    idempotencyKey: `${idempotencyKey}-start`,
    body: {
      kind: kindOf(file.contentType),
      file_name: file.fileName || "upload",
      content_type: file.contentType,
      byte_size: file.byteSize,
      parts: file.partChecksums.map((checksum_crc64nvme, i) => ({ part_number: i + 1, checksum_crc64nvme })),
    },
  });
  if (!started.ok) return refusedBy(started);
  const partSize = started.body.part_size;
  const sent: { part_number: number; etag: string; checksum_crc64nvme: string }[] = [];
  for (const part of started.body.parts) {
    const start = (part.part_number - 1) * partSize;
    const end = Math.min(file.byteSize, start + partSize);
    const answer = await sendPart(r, file, part, { start, end });
    if (!("etag" in answer)) return failure(answer.status, answer.detail);
    const checksum_crc64nvme = file.partChecksums[part.part_number - 1]!;
    sent.push({ part_number: part.part_number, etag: answer.etag, checksum_crc64nvme });
  }
  const completed = await r.api.call<Asset>("POST", `${base}/${started.body.id}/complete`, {
    idempotencyKey: `${idempotencyKey}-complete`,
    body: { byte_size: file.byteSize, checksum_crc64nvme: file.checksum, parts: sent },
  });
  return completed.ok ? { ok: true, asset: completed.body } : refusedBy(completed);
}

/** A JSON answer of the script's routes. */
function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store" },
  });
}

/** The API's answer, passed on to the script. */
const passOn = (answer: ApiAnswer<unknown>) => json(answer.status, answer.body ?? {});

/** A JSON body of the script (with its one-time idempotency key), or null when it is not readable. */
async function scriptBody(
  r: DashboardRequest,
): Promise<{ key: string; body: Record<string, unknown> } | null> {
  try {
    const body = (await readJsonBody(r.request)) as Record<string, unknown> | undefined;
    if (!body || typeof body !== "object" || typeof body.idempotency_key !== "string") return null;
    const { idempotency_key, ...rest } = body;
    return { key: idempotency_key, body: rest };
  } catch {
    return null;
  }
}

const unreadable = () => json(400, { detail: "The request is not what the dashboard's script sends." });

/**
 * The routes of the compose page's script (CSRF from `x-csrf-token`): start an upload and complete it
 * through the API (the bytes go from the browser straight to the part URLs), or, when the part URLs
 * are on another origin, send the whole file through the dashboard.
 */
export function uploadRoutes(routes: DashboardRoutes): void {
  const base = "/dashboard/workspaces/:workspace_id/uploads";
  routes
    .raw(base, async (r) => {
      const read = await scriptBody(r);
      if (!read) return unreadable();
      const path = `/workspaces/${r.workspace!.id}/asset-uploads`;
      return passOn(await r.api.call("POST", path, { body: read.body, idempotencyKey: read.key }));
    })
    .raw(`${base}/:upload_id/complete`, async (r) => {
      const read = await scriptBody(r);
      if (!read) return unreadable();
      const upload = encodeURIComponent(r.params.upload_id!);
      const path = `/workspaces/${r.workspace!.id}/asset-uploads/${upload}/complete`;
      return passOn(await r.api.call("POST", path, { body: read.body, idempotencyKey: read.key }));
    })
    .raw(`${base}/file`, async (r) => {
      const key = r.request.headers.get("x-idempotency-key") ?? "";
      if (!/^[A-Za-z0-9_-]{8,100}$/.test(key)) return unreadable();
      let received: Awaited<ReturnType<typeof readRawFile>>;
      try {
        received = await readRawFile(r.request, {
          fileName: fileNameOf(r.request.headers.get("x-file-name")),
          contentType: (r.request.headers.get("content-type") ?? "application/octet-stream").slice(0, 200),
          maxFileBytes: DASHBOARD_UPLOAD_MAX_BYTES,
        });
      } catch (error) {
        if (error instanceof BodyTooLarge) return json(413, { detail: tooLargeText() });
        throw error;
      }
      try {
        const file = received.files[0];
        if (!file) return json(400, { detail: "The file is empty." });
        const stored = await storeAsset(r, file, key);
        return stored.ok ? json(200, stored.asset) : json(stored.status, stored.problem);
      } finally {
        await received.cleanup();
      }
    });
}

/** What a refused oversize file is told. */
export function tooLargeText(): string {
  const mib = DASHBOARD_UPLOAD_MAX_BYTES / 1024 / 1024;
  return (
    `The file is larger than ${mib} MiB, the most the dashboard takes in one form. Upload it with ` +
    "the page's script enabled, the API or the command line."
  );
}

/** The file name the script sends (URI-encoded, as headers are ASCII). */
function fileNameOf(header: string | null): string {
  try {
    return decodeURIComponent(header ?? "").slice(0, 500) || "upload";
  } catch {
    return "upload";
  }
}
