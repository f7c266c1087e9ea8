// POST …/asset-uploads request validation: every rule of the contract and DESIGN.md's part-size
// rule, table-driven, plus the 10,000-part limit in both directions.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_ASSET_BYTES, partCountFor, partLength, partSizeFor } from "../../src/modules/assets/parts.ts";
import { expectProblem } from "../helpers/problems.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { assetsApi, idem, ok } from "./helpers.ts";

const MiB = 1024 * 1024;
const CHECK = "rosUhgp5mIg=";

let s: TestServer;
let a: ReturnType<typeof assetsApi>;
beforeAll(async () => {
  s = await startTestServer();
  a = assetsApi(s, s.owner.workspaceId);
});
afterAll(async () => {
  await s.stop();
});

/** `n` parts numbered 1..n, each with a well-formed checksum. */
const parts = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ part_number: i + 1, checksum_crc64nvme: CHECK }));
const valid = (over: Record<string, unknown> = {}) => ({
  kind: "card",
  file_name: "a.png",
  content_type: "image/png",
  byte_size: 100,
  parts: parts(1),
  ...over,
});

describe("the part-size rule", () => {
  const cases: { byteSize: number; partSize: number; count: number; last: number }[] = [
    { byteSize: 1, partSize: 5 * MiB, count: 1, last: 1 },
    { byteSize: 5 * MiB, partSize: 5 * MiB, count: 1, last: 5 * MiB },
    { byteSize: 5 * MiB + 1, partSize: 5 * MiB, count: 2, last: 1 },
    { byteSize: 1024 * MiB, partSize: 5 * MiB, count: 205, last: 4 * MiB },
    { byteSize: 10_000 * 5 * MiB, partSize: 5 * MiB, count: 10_000, last: 5 * MiB },
    {
      byteSize: 10_000 * 5 * MiB + 1,
      partSize: 6 * MiB,
      count: 8334,
      last: 10_000 * 5 * MiB + 1 - 8333 * 6 * MiB,
    },
    { byteSize: 100 * 1024 * MiB, partSize: 11 * MiB, count: 9310, last: 100 * 1024 * MiB - 9309 * 11 * MiB },
    { byteSize: MAX_ASSET_BYTES, partSize: 64 * MiB, count: 10_000, last: 64 * MiB },
  ];
  for (const c of cases) {
    test(`${c.byteSize} bytes: parts of ${c.partSize}, ${c.count} of them, the last ${c.last}`, () => {
      expect(partSizeFor(c.byteSize)).toBe(c.partSize);
      expect(partCountFor(c.byteSize, c.partSize)).toBe(c.count);
      expect(partLength(c.byteSize, c.partSize, 1)).toBe(Math.min(c.partSize, c.byteSize));
      expect(partLength(c.byteSize, c.partSize, c.count)).toBe(c.last);
      expect(c.partSize % MiB).toBe(0);
    });
  }
});

describe("POST /asset-uploads refuses", () => {
  const cases: { name: string; body: Record<string, unknown>; pointers: string[] }[] = [
    { name: "an unknown kind", body: valid({ kind: "gallery" }), pointers: ["/kind"] },
    { name: "a missing kind", body: (({ kind: _, ...rest }) => rest)(valid()), pointers: ["/kind"] },
    { name: "an empty file name", body: valid({ file_name: "" }), pointers: ["/file_name"] },
    {
      name: "a file name of 501 characters",
      body: valid({ file_name: "x".repeat(501) }),
      pointers: ["/file_name"],
    },
    { name: "an empty content type", body: valid({ content_type: "" }), pointers: ["/content_type"] },
    {
      name: "a content type of 201 characters",
      body: valid({ content_type: "image/" + "x".repeat(195) }),
      pointers: ["/content_type"],
    },
    {
      name: "a content type Herald does not take",
      body: valid({ content_type: "application/pdf" }),
      pointers: ["/content_type"],
    },
    {
      name: "a video content type on a card",
      body: valid({ content_type: "video/mp4" }),
      pointers: ["/content_type"],
    },
    { name: "an image content type on a video", body: valid({ kind: "video" }), pointers: ["/content_type"] },
    { name: "byte_size 0", body: valid({ byte_size: 0 }), pointers: ["/byte_size"] },
    { name: "a fractional byte_size", body: valid({ byte_size: 1.5 }), pointers: ["/byte_size"] },
    {
      name: "byte_size above 10,000 parts of 64 MiB",
      body: valid({ byte_size: MAX_ASSET_BYTES + 1, parts: parts(10_000) }),
      pointers: ["/byte_size"],
    },
    { name: "no parts", body: valid({ parts: [] }), pointers: ["/parts"] },
    { name: "two parts for 100 bytes", body: valid({ parts: parts(2) }), pointers: ["/parts"] },
    { name: "one part for 5 MiB + 1 byte", body: valid({ byte_size: 5 * MiB + 1 }), pointers: ["/parts"] },
    {
      name: "three parts for 10 MiB",
      body: valid({ byte_size: 10 * MiB, parts: parts(3) }),
      pointers: ["/parts"],
    },
    {
      name: "part numbers that repeat",
      body: valid({
        byte_size: 10 * MiB,
        parts: [
          { part_number: 1, checksum_crc64nvme: CHECK },
          { part_number: 1, checksum_crc64nvme: CHECK },
        ],
      }),
      pointers: ["/parts/1/part_number"],
    },
    {
      name: "part numbers with a gap",
      body: valid({
        byte_size: 10 * MiB,
        parts: [
          { part_number: 1, checksum_crc64nvme: CHECK },
          { part_number: 3, checksum_crc64nvme: CHECK },
        ],
      }),
      pointers: ["/parts/1/part_number"],
    },
    {
      name: "part number 0",
      body: valid({ parts: [{ part_number: 0, checksum_crc64nvme: CHECK }] }),
      pointers: ["/parts/0/part_number"],
    },
    {
      name: "a checksum that is not base64",
      body: valid({ parts: [{ part_number: 1, checksum_crc64nvme: "not base64!!" }] }),
      pointers: ["/parts/0/checksum_crc64nvme"],
    },
    {
      name: "a checksum of 4 bytes (CRC32)",
      body: valid({ parts: [{ part_number: 1, checksum_crc64nvme: "AAAAAA==" }] }),
      pointers: ["/parts/0/checksum_crc64nvme"],
    },
    {
      name: "a checksum in hex",
      body: valid({ parts: [{ part_number: 1, checksum_crc64nvme: "ae8b14860a799888" }] }),
      pointers: ["/parts/0/checksum_crc64nvme"],
    },
    {
      name: "a part without a checksum",
      body: valid({ parts: [{ part_number: 1 }] }),
      pointers: ["/parts/0/checksum_crc64nvme"],
    },
    { name: "part_size below 5 MiB", body: valid({ part_size: 1024 }), pointers: ["/part_size"] },
    {
      name: "part_size not the rule's value",
      body: valid({ byte_size: 20 * MiB, part_size: 10 * MiB, parts: parts(2) }),
      pointers: ["/part_size", "/parts"],
    },
    { name: "an unknown property", body: valid({ checksum: "x" }), pointers: ["/checksum"] },
  ];
  for (const c of cases) {
    test(`${c.name}: 400 on ${c.pointers.join(", ")}`, async () => {
      expectProblem(await a.start(c.body), 400, "public_invalid_request", c.pointers);
    });
  }

  test("a request without Idempotency-Key", async () => {
    const r = await a.start(valid(), {});
    expectProblem(r, 400, "public_invalid_request");
    expect(r.body.errors[0].parameter).toBe("Idempotency-Key");
  });

  test("10,001 parts", async () => {
    expectProblem(
      await a.start(valid({ byte_size: 10_001 * 5 * MiB, parts: parts(10_001) })),
      400,
      "public_invalid_request",
      ["/parts"],
    );
  });

  test("nothing is reserved by a refused request", async () => {
    const before = ok(await a.list("?limit=100")).body.data.length;
    await a.start(valid({ kind: "gallery" }));
    expect(ok(await a.list("?limit=100")).body.data.length).toBe(before);
  });
});

describe("POST /asset-uploads accepts", () => {
  test("10,000 parts of 5 MiB: 10,000 signed part URLs", async () => {
    const r = ok(await a.start(valid({ byte_size: 10_000 * 5 * MiB, parts: parts(10_000) })), 201);
    expect(r.body.part_size).toBe(5 * MiB);
    expect(r.body.parts.length).toBe(10_000);
    expect(r.body.parts[9_999]).toMatchObject({ part_number: 10_000, required_headers: {} });
    expect(new Set(r.body.parts.map((p: any) => p.upload_url)).size).toBe(10_000);
  });

  test("just over 10,000 × 5 MiB: parts of 6 MiB, 8,334 of them, and part_size may be stated", async () => {
    const byteSize = 10_000 * 5 * MiB + 1;
    const r = ok(await a.start(valid({ byte_size: byteSize, part_size: 6 * MiB, parts: parts(8334) })), 201);
    expect(r.body.part_size).toBe(6 * MiB);
    expect(r.body.parts.length).toBe(8334);
  });

  test("parts listed out of order", async () => {
    const r = ok(
      await a.start(
        valid({
          byte_size: 12 * MiB,
          parts: [3, 1, 2].map((n) => ({ part_number: n, checksum_crc64nvme: CHECK })),
        }),
      ),
      201,
    );
    expect(r.body.parts.map((p: any) => p.part_number)).toEqual([1, 2, 3]);
  });

  test("content type aliases and parameters, stored in canonical form", async () => {
    const r = ok(await a.start(valid({ content_type: "Image/JPG; charset=binary" }), idem()), 201);
    expect(ok(await a.get(r.body.asset_id)).body.content_type).toBe("image/jpeg");
  });
});
