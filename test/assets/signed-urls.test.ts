// Herald's own signed URLs on local storage: part uploads (streamed to disk with CRC64NVME checked
// on the way; corrupt or short parts are refused and nothing is kept; re-sent parts replace) and
// downloads; tampered and expired URLs are refused. s3rver checks none of this, so it is tested here.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { uptime } from "node:os";
import { join } from "node:path";
import { engineOf } from "../../src/db/engine.ts";
import {
  checkDownloadUrl,
  checkPartUploadUrl,
  downloadUrl,
  partUploadUrl,
} from "../../src/modules/assets/signed-urls.ts";
import { expectProblem } from "../helpers/problems.ts";
import { startTestServer, type TestResponse, type TestServer } from "../helpers/server.ts";
import {
  assetsApi,
  completeBody,
  ok,
  planUpload,
  sendAllParts,
  uploadAsset,
  uploadBody,
  type Plan,
} from "./helpers.ts";
import { png } from "./samples.ts";

const MiB = 1024 * 1024;

let s: TestServer;
let a: ReturnType<typeof assetsApi>;
beforeAll(async () => {
  s = await startTestServer();
  a = assetsApi(s, s.owner.workspaceId);
});
afterAll(async () => {
  await s.stop();
});

/** A PUT to a URL, read like the test server's own requests. */
async function put(
  url: string,
  body: Uint8Array | string,
  headers: Record<string, string> = {},
): Promise<TestResponse> {
  const response = await fetch(url, { method: "PUT", body, headers });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    body: /json/.test(response.headers.get("content-type") ?? "") ? JSON.parse(text) : undefined,
  };
}

async function get(url: string): Promise<TestResponse> {
  const response = await fetch(url);
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    body: /json/.test(response.headers.get("content-type") ?? "") ? JSON.parse(text) : undefined,
  };
}

/** A started two-part upload (10 MiB + a bit) and its plan. */
async function started(): Promise<{ upload: any; plan: Plan }> {
  const plan = await planUpload(png(50, 40, 5 * MiB + 1000));
  return { upload: ok(await a.start(uploadBody(plan)), 201).body, plan };
}

const storedParts = async (upload: any) =>
  s.herald.blobs.listParts(`${s.owner.workspaceId}/${upload.asset_id}`, await storeUploadIdOf(upload.id));
const storeUploadIdOf = async (uploadId: string) => {
  const sql = "SELECT store_upload_id FROM asset_uploads WHERE id = ?";
  const [row] = await engineOf(s.herald.db).query<{ store_upload_id: string }>(sql, [uploadId]);
  return row!.store_upload_id;
};

function expectRefusedUrl(r: TestResponse, detail: RegExp): void {
  expectProblem(r, 401, "public_authentication_required");
  expect(r.body.detail).toMatch(detail);
  expect(r.headers.get("www-authenticate")).toStartWith("Signature");
  expect(r.headers.get("www-authenticate")).not.toStartWith("Bearer");
}

describe("part upload", () => {
  test("a part answers 200 with its ETag, without any Authorization", async () => {
    const { upload, plan } = await started();
    const r = await put(upload.parts[0].upload_url, plan.parts[0]!.bytes);
    expect(r.status).toBe(200);
    expect(r.headers.get("etag")).toMatch(/^"[0-9a-f]{16}"$/);
    expect(r.body).toMatchObject({
      object: "asset_upload_part",
      upload_id: upload.id,
      part_number: 1,
      byte_size: 5 * MiB,
      checksum_crc64nvme: plan.parts[0]!.checksum_crc64nvme,
      etag: r.headers.get("etag"),
    });
  });

  test("a corrupted part is 400 and nothing is kept; the good one is taken afterwards", async () => {
    const { upload, plan } = await started();
    const corrupted = Uint8Array.from(plan.parts[1]!.bytes);
    corrupted[corrupted.length - 1]! ^= 0x01;
    const r = await put(upload.parts[1].upload_url, corrupted);
    expectProblem(r, 400, "public_invalid_request");
    expect(r.body.detail).toContain("does not match the CRC64NVME");
    expect(await storedParts(upload)).toEqual([]);
    expect(ok(await put(upload.parts[1].upload_url, plan.parts[1]!.bytes)).status).toBe(200);
    expect((await storedParts(upload)).map((p) => p.partNumber)).toEqual([2]);
  });

  test("a corrupted re-send leaves the good part in place", async () => {
    const { upload, plan } = await started();
    const etags = await sendAllParts(upload, plan);
    const corrupted = Uint8Array.from(plan.parts[0]!.bytes);
    corrupted[12345]! ^= 0xff;
    expectProblem(await put(upload.parts[0].upload_url, corrupted), 400, "public_invalid_request");
    expect(ok(await a.complete(upload.id, completeBody(plan, etags))).body.status).toBe("ready");
  });

  test("a re-sent part replaces the earlier one (one part, same ETag) and completes", async () => {
    const { upload, plan } = await started();
    const first = await put(upload.parts[0].upload_url, plan.parts[0]!.bytes);
    const again = await put(upload.parts[0].upload_url, plan.parts[0]!.bytes);
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(again.headers.get("etag")).toBe(first.headers.get("etag"));
    const second = await put(upload.parts[1].upload_url, plan.parts[1]!.bytes);
    expect((await storedParts(upload)).map((p) => p.partNumber)).toEqual([1, 2]);
    ok(
      await a.complete(
        upload.id,
        completeBody(plan, [again.headers.get("etag")!, second.headers.get("etag")!]),
      ),
    );
  });

  const sizes: {
    name: string;
    body: (plan: Plan) => Uint8Array;
    headers?: Record<string, string>;
    detail: RegExp;
  }[] = [
    {
      name: "a short part",
      body: (p) => p.parts[0]!.bytes.subarray(0, 1000),
      detail: /must be exactly 5242880 bytes/,
    },
    {
      name: "a long part",
      body: (p) => new Uint8Array(5 * MiB + 1),
      detail: /must be exactly 5242880 bytes/,
    },
    { name: "an empty part", body: () => new Uint8Array(0), detail: /must be exactly 5242880 bytes/ },
  ];
  for (const c of sizes) {
    test(`${c.name} is 400 and nothing is kept`, async () => {
      const { upload, plan } = await started();
      const r = await put(upload.parts[0].upload_url, c.body(plan), c.headers);
      expectProblem(r, 400, "public_invalid_request");
      expect(r.body.detail).toMatch(c.detail);
      expect(await storedParts(upload)).toEqual([]);
    });
  }

  test("a chunked part of the wrong length is refused while streaming", async () => {
    const { upload, plan } = await started();
    const bytes = plan.parts[0]!.bytes;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes);
        controller.enqueue(new Uint8Array(10));
        controller.close();
      },
    });
    const response = await fetch(upload.parts[0].upload_url, { method: "PUT", body: stream });
    expect(response.status).toBe(400);
    expect(await storedParts(upload)).toEqual([]);
  });

  test("an expired part URL is 401, saying so", async () => {
    const { upload, plan } = await started();
    s.clock.advance(24 * 3600_000 + 1000);
    try {
      expectRefusedUrl(await put(upload.parts[0].upload_url, plan.parts[0]!.bytes), /expired/);
    } finally {
      s.clock.advance(-(24 * 3600_000 + 1000));
    }
  });

  const tampered: { name: string; change: (url: URL, other: string) => void }[] = [
    {
      name: "another part number",
      change: (u) => {
        u.pathname = u.pathname.replace(/\/parts\/1$/, "/parts/2");
      },
    },
    {
      name: "another upload id",
      change: (u, other) => {
        u.pathname = u.pathname.replace(/upl_[0-9a-z]+/, other);
      },
    },
    {
      name: "a later expiry",
      change: (u) => u.searchParams.set("expires", String(Number(u.searchParams.get("expires")) + 3600)),
    },
    {
      name: "a changed signature",
      change: (u) =>
        u.searchParams.set(
          "signature",
          u.searchParams.get("signature")!.replace(/^./, (c) => (c === "A" ? "B" : "A")),
        ),
    },
    { name: "no signature", change: (u) => u.searchParams.delete("signature") },
    { name: "no expiry", change: (u) => u.searchParams.delete("expires") },
  ];
  for (const c of tampered) {
    test(`a part URL with ${c.name} is 401 and stores nothing`, async () => {
      const { upload, plan } = await started();
      const other = (await started()).upload;
      const url = new URL(upload.parts[0].upload_url);
      c.change(url, other.id);
      expectRefusedUrl(await put(url.toString(), plan.parts[0]!.bytes), /not valid/);
      expect(await storedParts(upload)).toEqual([]);
      expect(await storedParts(other)).toEqual([]);
    });
  }

  test("a signed URL for a part the upload does not have is 404", async () => {
    const { upload } = await started();
    const url = partUploadUrl(s.herald, upload.id, 3, Date.parse(upload.expires_at));
    expectProblem(await put(url, "x"), 404, "public_not_found");
  });

  test("a part damaged on disk before a restart is found at completion; sent again, it completes", async () => {
    const { upload, plan } = await started();
    const etags = await sendAllParts(upload, plan);
    // As after a power cut: part 2's region of the upload's file holds other bytes, and was written
    // before the machine started.
    const dir = join(s.dataDir, "blobs", ".multipart", await storeUploadIdOf(upload.id));
    const marker = readdirSync(dir).find((n) => n.startsWith("slot-00002."))!;
    const bytes = readFileSync(join(dir, "data"));
    bytes[5 * MiB + 100]! ^= 0xff;
    writeFileSync(join(dir, "data"), bytes);
    const beforeBoot = (Date.now() - uptime() * 1000 - 3600_000) / 1000;
    utimesSync(join(dir, marker), beforeBoot, beforeBoot);
    const r = await a.complete(upload.id, completeBody(plan, etags));
    expectProblem(r, 400, "public_invalid_request", ["/parts"]);
    expect(r.body.errors[0].detail).toContain("part 2 was damaged on disk");
    expect(await s.herald.blobs.stat(`${s.owner.workspaceId}/${upload.asset_id}`)).toBeNull();
    expect((await storedParts(upload)).map((p) => p.partNumber)).toEqual([1]);
    expect(ok(await put(upload.parts[1].upload_url, plan.parts[1]!.bytes)).status).toBe(200);
    expect(ok(await a.complete(upload.id, completeBody(plan, etags))).body.status).toBe("ready");
  });

  test("after completion the upload takes no more parts (409)", async () => {
    const { upload, plan } = await started();
    const etags = await sendAllParts(upload, plan);
    ok(await a.complete(upload.id, completeBody(plan, etags)));
    expectProblem(await put(upload.parts[0].upload_url, plan.parts[0]!.bytes), 409, "public_conflict");
  });
});

describe("download URL", () => {
  let asset: any;
  let link: string;
  const bytes = png(33, 22);
  beforeAll(async () => {
    asset = await uploadAsset(s, s.owner.workspaceId, bytes, { fileName: "report card.png" });
    link = ok(await a.get(asset.id, "?include=download")).body.download_url;
  });

  test("serves the file with its name, type and length", async () => {
    expect(link).toStartWith(`${s.url}/downloads/${asset.id}?`);
    const r = await fetch(link);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("image/png");
    expect(r.headers.get("content-length")).toBe(String(bytes.length));
    expect(r.headers.get("content-disposition")).toContain('filename="report card.png"');
    expect(Buffer.from(await r.arrayBuffer()).equals(bytes)).toBe(true);
  });

  test("is refused five minutes later", async () => {
    s.clock.advance(5 * 60_000 + 1000);
    try {
      expectRefusedUrl(await get(link), /expired/);
    } finally {
      s.clock.advance(-(5 * 60_000 + 1000));
    }
  });

  const tampered: { name: string; change: (url: URL, other: string) => void }[] = [
    {
      name: "another asset id",
      change: (u, other) => {
        u.pathname = `/downloads/${other}`;
      },
    },
    {
      name: "a later expiry",
      change: (u) => u.searchParams.set("expires", String(Number(u.searchParams.get("expires")) + 60)),
    },
    {
      name: "a cut signature",
      change: (u) => u.searchParams.set("signature", u.searchParams.get("signature")!.slice(0, -1)),
    },
  ];
  for (const c of tampered) {
    test(`with ${c.name} is 401`, async () => {
      const other = await uploadAsset(s, s.owner.workspaceId, png(2, 2));
      const url = new URL(link);
      c.change(url, other.id);
      expectRefusedUrl(await get(url.toString()), /not valid/);
    });
  }

  test("a deleted asset's link is 404", async () => {
    const gone = await uploadAsset(s, s.owner.workspaceId, png(3, 3));
    const goneLink = ok(await a.get(gone.id, "?include=download")).body.download_url;
    ok(await a.remove(gone.id));
    expectProblem(await get(goneLink), 404, "public_not_found");
  });
});

describe("the signatures", () => {
  const expiresAt = Date.parse("2026-03-01T13:00:00Z");
  const query = (url: string) =>
    Object.fromEntries(new URL(url).searchParams) as { expires?: string; signature?: string };

  test("a part signature covers upload id, part number and expiry", () => {
    const q = query(partUploadUrl(s.herald, "upl_a", 1, expiresAt));
    expect(q.expires).toBe(String(expiresAt / 1000));
    expect(checkPartUploadUrl(s.herald, "upl_a", "1", q)).toBe("ok");
    expect(checkPartUploadUrl(s.herald, "upl_b", "1", q)).toBe("invalid");
    expect(checkPartUploadUrl(s.herald, "upl_a", "2", q)).toBe("invalid");
    expect(checkPartUploadUrl(s.herald, "upl_a", "01", q)).toBe("invalid");
    expect(checkPartUploadUrl(s.herald, "upl_a", "1", { ...q, expires: String(Number(q.expires) + 1) })).toBe(
      "invalid",
    );
    expect(checkPartUploadUrl(s.herald, "upl_a", "1", { ...q, expires: "1e12" })).toBe("invalid");
  });

  test("expiry is checked against the clock, to the second", () => {
    const q = query(partUploadUrl(s.herald, "upl_a", 1, s.clock.now() + 2000));
    expect(checkPartUploadUrl(s.herald, "upl_a", "1", q)).toBe("ok");
    s.clock.advance(2000);
    try {
      expect(checkPartUploadUrl(s.herald, "upl_a", "1", q)).toBe("expired");
    } finally {
      s.clock.advance(-2000);
    }
  });

  test("a part signature is not a download signature (one key per purpose)", () => {
    const part = query(partUploadUrl(s.herald, "ast_x", 1, expiresAt));
    // Same data shape "<id>.<n>.<exp>" vs "<id>.<exp>": craft the overlap and check it still fails.
    const download = query(downloadUrl(s.herald, "ast_x.1", expiresAt));
    expect(checkDownloadUrl(s.herald, "ast_x.1", part)).toBe("invalid");
    expect(checkPartUploadUrl(s.herald, "ast_x", "1", download)).toBe("invalid");
  });
});
