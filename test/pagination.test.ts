import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { engineOf } from "../src/db/engine.ts";
import { expectProblem } from "./helpers/problems.ts";
import { startTestServer, type TestResponse, type TestServer } from "./helpers/server.ts";

// Cursor pagination, on the two listings that page today. Each workspace created also writes an
// audit record, so one set of fixtures gives both listings more than a default page.

let s: TestServer;
const CREATED = 30; // plus the bootstrap workspace: 31 workspaces; 32 audit records with bootstrap's two

beforeAll(async () => {
  s = await startTestServer();
  for (let i = 0; i < CREATED; i++) {
    const r = await s.request("POST", "/v1/workspaces", { body: { name: `Workspace ${i}` } });
    expect(r.status).toBe(201);
  }
});
afterAll(async () => {
  await s.stop();
});

const LISTINGS = [
  { path: "/v1/workspaces", table: "workspaces" },
  { path: "/v1/audit-records", table: "audit_records" },
];

/** Ids of an account's rows, newest first, straight from the database. */
async function idsInDatabase(table: string): Promise<string[]> {
  const sql = `SELECT id FROM ${table} WHERE account_id = ? ORDER BY id DESC`;
  const rows = await engineOf(s.herald.db).query<{ id: string }>(sql, [s.owner.accountId]);
  return rows.map((r) => r.id);
}

/** The URL of a `Link: <url>; rel="next"` header, or null when there is none. */
function nextLink(r: TestResponse): string | null {
  const link = r.headers.get("link");
  if (link === null) return null;
  const match = /^<([^>]+)>;\s*rel="next"$/.exec(link);
  expect(match).not.toBeNull();
  return match![1]!;
}

async function follow(url: string, key = s.owner.apiKey): Promise<TestResponse> {
  expect(url.startsWith(s.url + "/v1/")).toBe(true);
  return s.request("GET", url.slice(s.url.length), { key });
}

function expectListing(r: TestResponse): void {
  expect(r.status).toBe(200);
  expect(Array.isArray(r.body.data)).toBe(true);
  expect(typeof r.body.has_more).toBe("boolean");
  if (r.body.has_more) {
    expect(typeof r.body.next_cursor).toBe("string");
    expect(nextLink(r)).not.toBeNull();
  } else {
    expect(r.body.next_cursor).toBeNull();
    expect(r.headers.get("link")).toBeNull();
  }
}

function expectBadParameter(r: TestResponse, parameter: string): void {
  expectProblem(r, 400, "public_invalid_request");
  expect(r.body.errors[0].parameter).toBe(parameter);
}

for (const listing of LISTINGS) {
  describe(`GET ${listing.path}`, () => {
    describe("limit", () => {
      for (const [limit, size] of [
        ["1", 1],
        ["100", "all"],
        ["25", 25],
      ] as const) {
        test(`limit=${limit} is accepted`, async () => {
          const r = await s.request("GET", `${listing.path}?limit=${limit}`);
          expectListing(r);
          expect(r.body.data.length).toBe(
            size === "all" ? (await idsInDatabase(listing.table)).length : size,
          );
        });
      }

      for (const limit of ["0", "101", "abc", "1.5", "-1", "", "1e1", "1000"]) {
        test(`limit=${JSON.stringify(limit)} is 400 naming limit`, async () => {
          expectBadParameter(
            await s.request("GET", `${listing.path}?limit=${encodeURIComponent(limit)}`),
            "limit",
          );
        });
      }

      test("the default page size is 25", async () => {
        expect((await idsInDatabase(listing.table)).length).toBeGreaterThan(25);
        const r = await s.request("GET", listing.path);
        expectListing(r);
        expect(r.body.data.length).toBe(25);
        expect(r.body.has_more).toBe(true);
      });
    });

    describe("walking the pages", () => {
      test("following Link returns every item exactly once, newest first", async () => {
        const expected = await idsInDatabase(listing.table);
        const seen: string[] = [];
        let r = await s.request("GET", `${listing.path}?limit=7`);
        let pages = 1;
        for (;;) {
          expectListing(r);
          seen.push(...r.body.data.map((item: { id: string }) => item.id));
          const next = nextLink(r);
          if (!next) break;
          expect(r.body.data.length).toBe(7);
          expect(new URL(next).searchParams.get("limit")).toBe("7");
          expect(new URL(next).searchParams.get("after")).toBe(r.body.next_cursor);
          r = await follow(next);
          pages++;
        }
        expect(seen).toEqual(expected);
        expect(new Set(seen).size).toBe(seen.length);
        expect(pages).toBe(Math.ceil(expected.length / 7));
      });

      test("next_cursor sent as `after` gives the same page as the Link", async () => {
        const first = await s.request("GET", `${listing.path}?limit=3`);
        const viaLink = await follow(nextLink(first)!);
        const viaCursor = await s.request(
          "GET",
          `${listing.path}?limit=3&after=${encodeURIComponent(first.body.next_cursor)}`,
        );
        expect(viaCursor.body).toEqual(viaLink.body);
        expect(viaCursor.body.data[0].id < first.body.data[2].id).toBe(true);
      });

      test("the last page has has_more false, next_cursor null and no Link", async () => {
        const total = (await idsInDatabase(listing.table)).length;
        const first = await s.request("GET", `${listing.path}?limit=${total - 1}`);
        expect(first.body.has_more).toBe(true);
        const last = await follow(nextLink(first)!);
        expectListing(last);
        expect(last.body.data.length).toBe(1);
        expect(last.body.has_more).toBe(false);
        expect(last.body.next_cursor).toBeNull();
        expect(last.headers.get("link")).toBeNull();
      });

      test("a page that holds exactly the rest has no next page", async () => {
        const total = (await idsInDatabase(listing.table)).length;
        const r = await s.request("GET", `${listing.path}?limit=${total}`);
        expect(r.body.data.length).toBe(total);
        expect(r.body.has_more).toBe(false);
        expect(r.headers.get("link")).toBeNull();
      });
    });

    describe("cursors only work where they were issued", () => {
      const tamper = (cursor: string, at: number) => {
        const i = at < 0 ? cursor.length + at : at;
        return cursor.slice(0, i) + (cursor[i] === "A" ? "B" : "A") + cursor.slice(i + 1);
      };
      const cases: { name: string; cursor: () => Promise<string>; key?: () => Promise<string> }[] = [
        {
          name: "a cursor with one character changed in its payload",
          cursor: async () => tamper(await cursorOf(listing.path), 3),
        },
        {
          name: "a cursor with one character changed in its signature",
          cursor: async () => tamper(await cursorOf(listing.path), -5),
        },
        { name: "a truncated cursor", cursor: async () => (await cursorOf(listing.path)).slice(0, -1) },
        { name: "garbage", cursor: async () => "not-a-cursor" },
        {
          name: "a cursor of the other listing",
          cursor: () => cursorOf(LISTINGS.find((l) => l !== listing)!.path),
        },
        {
          name: "a cursor issued to another credential",
          cursor: () => cursorOf(listing.path),
          key: () => s.createKey({}),
        },
      ];
      for (const c of cases) {
        test(`${c.name} is 400 naming after`, async () => {
          const cursor = await c.cursor();
          const r = await s.request("GET", `${listing.path}?after=${encodeURIComponent(cursor)}`, {
            key: (await c.key?.()) ?? s.owner.apiKey,
          });
          expectBadParameter(r, "after");
        });
      }

      test("an empty after is 400", async () => {
        expectBadParameter(await s.request("GET", `${listing.path}?after=`), "after");
      });
    });
  });
}

/** A valid next_cursor of a listing, issued to the owner's key. */
async function cursorOf(path: string): Promise<string> {
  const r = await s.request("GET", `${path}?limit=2`);
  expect(typeof r.body.next_cursor).toBe("string");
  return r.body.next_cursor;
}

describe("pages are stable while items are added", () => {
  test("a workspace created mid-walk does not shift the next page", async () => {
    const first = await s.request("GET", "/v1/workspaces?limit=5");
    await s.request("POST", "/v1/workspaces", { body: { name: "Late arrival" } });
    const second = await follow(nextLink(first)!);
    const firstIds = first.body.data.map((w: { id: string }) => w.id);
    for (const w of second.body.data) {
      expect(firstIds).not.toContain(w.id);
      expect(w.id < firstIds[4]).toBe(true);
    }
  });
});
