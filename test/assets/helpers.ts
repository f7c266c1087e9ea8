// Helpers for the asset tests: a client that plans parts (the part-size rule, CRC64NVME per part and
// for the whole file), sends them where the upload says, and completes; and an in-process S3.
import { expect } from "bun:test";
import { combineCrc64Nvme, crc64nvmeOf, crc64nvmeToBase64 } from "../../src/lib/crc64nvme.ts";
import { partCountFor, partLength, partSizeFor } from "../../src/modules/assets/parts.ts";
import type { TestResponse, TestServer } from "../helpers/server.ts";

let keys = 0;
/** A fresh Idempotency-Key header. */
export function idem(): Record<string, string> {
  return { "idempotency-key": `assets-${Date.now()}-${++keys}` };
}

/** One planned part: its number, bytes and checksum. */
export interface PlannedPart {
  part_number: number;
  bytes: Uint8Array;
  checksum_crc64nvme: string;
}

/** A file cut by the part-size rule, with every checksum the API wants. */
export interface Plan {
  byteSize: number;
  partSize: number;
  parts: PlannedPart[];
  checksum: string;
}

/** Cuts `bytes` into parts and computes their CRC64NVME values and the whole file's. */
export async function planUpload(bytes: Uint8Array): Promise<Plan> {
  const partSize = partSizeFor(bytes.length);
  const parts: PlannedPart[] = [];
  let whole = 0n;
  for (let n = 1; n <= partCountFor(bytes.length, partSize); n++) {
    const slice = bytes.subarray(
      (n - 1) * partSize,
      (n - 1) * partSize + partLength(bytes.length, partSize, n),
    );
    const crc = await crc64nvmeOf(slice);
    whole = n === 1 ? crc : combineCrc64Nvme(whole, crc, slice.length);
    parts.push({ part_number: n, bytes: slice, checksum_crc64nvme: crc64nvmeToBase64(crc) });
  }
  return { byteSize: bytes.length, partSize, parts, checksum: crc64nvmeToBase64(whole) };
}

/** The asset-upload request body for a plan. */
export function uploadBody(
  plan: Plan,
  options: { kind?: string; contentType?: string; fileName?: string } = {},
) {
  return {
    kind: options.kind ?? "card",
    file_name: options.fileName ?? "picture.png",
    content_type: options.contentType ?? "image/png",
    byte_size: plan.byteSize,
    parts: plan.parts.map((p) => ({ part_number: p.part_number, checksum_crc64nvme: p.checksum_crc64nvme })),
  };
}

/** Asserts a status (showing the body when it differs). */
export function ok(r: TestResponse, status = 200): TestResponse {
  expect({ status: r.status, text: r.text.slice(0, 2000) }).toMatchObject({ status });
  return r;
}

/** Sends one part to its upload URL with its required headers; returns the raw response. */
export function sendPart(
  part: { upload_url: string; required_headers: Record<string, string> },
  bytes: Uint8Array,
): Promise<Response> {
  return fetch(part.upload_url, { method: "PUT", headers: part.required_headers, body: bytes });
}

/** Request helpers for one server and workspace. */
export function assetsApi(s: TestServer, ws: string) {
  const base = `/v1/workspaces/${ws}`;
  return {
    start: (body: unknown, headers: Record<string, string> = idem()) =>
      s.request("POST", `${base}/asset-uploads`, { body, headers }),
    complete: (uploadId: string, body: unknown, headers: Record<string, string> = idem()) =>
      s.request("POST", `${base}/asset-uploads/${uploadId}/complete`, { body, headers }),
    get: (id: string, query = "") => s.request("GET", `${base}/assets/${id}${query}`),
    list: (query = "") => s.request("GET", `${base}/assets${query}`),
    remove: (id: string) => s.request("DELETE", `${base}/assets/${id}`),
  };
}

/** Sends every part of a started upload; returns the ETag of each. */
export async function sendAllParts(upload: any, plan: Plan): Promise<string[]> {
  const etags: string[] = [];
  for (const part of upload.parts) {
    const r = await sendPart(part, plan.parts[part.part_number - 1]!.bytes);
    expect({ status: r.status, text: r.status === 200 ? "" : await r.text() }).toEqual({
      status: 200,
      text: "",
    });
    etags.push(r.headers.get("etag")!);
  }
  return etags;
}

/** The completion body for a plan and the ETags its parts got. */
export function completeBody(plan: Plan, etags: string[]) {
  return {
    byte_size: plan.byteSize,
    checksum_crc64nvme: plan.checksum,
    parts: plan.parts.map((p, i) => ({
      part_number: p.part_number,
      etag: etags[i]!,
      checksum_crc64nvme: p.checksum_crc64nvme,
    })),
  };
}

/** The whole flow: start, send every part, complete; returns the ready asset. */
export async function uploadAsset(
  s: TestServer,
  ws: string,
  bytes: Uint8Array,
  options: { kind?: string; contentType?: string; fileName?: string } = {},
) {
  const api = assetsApi(s, ws);
  const plan = await planUpload(bytes);
  const upload = ok(await api.start(uploadBody(plan, options)), 201).body;
  const etags = await sendAllParts(upload, plan);
  return ok(await api.complete(upload.id, completeBody(plan, etags))).body;
}
