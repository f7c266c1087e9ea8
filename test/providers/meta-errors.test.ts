// Meta's error table (src/providers/meta/errors.ts), one case per (code, subcode) pair it lists, written
// from Meta's pages apart from the table: what a Graph error answer becomes on a call that creates
// nothing and on a create call (kind, retry time, user action), for Facebook, Instagram and Threads alike
// (all three read errors through metaGraphError). Every row of the table has its case here.
import { describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import {
  classifyMetaError,
  isMetaWait,
  META_ERROR_TABLE,
  META_PUBLISHING_LIMIT_FALLBACK_MS,
  META_THROTTLE_FALLBACK_MS,
} from "../../src/providers/meta/errors.ts";
import { metaGraphError } from "../../src/providers/meta/graph.ts";
import { postErrorFrom } from "../../src/modules/publishing/failures.ts";
import type { FailureKind } from "../../src/providers/types.ts";
import { bucHeader, graphErrorBody } from "../fakes/meta.ts";

const NOW = Date.parse("2026-11-28T02:00:00Z");
const MINUTE = 60_000;

/** What Herald does with a pair: the failure on a read, on a create call, and the user action. */
interface Expected {
  read: FailureKind;
  create: FailureKind;
  /** The fallback retry delay of a throttled pair (no BUC header, no Retry-After). */
  retryAfterMs?: number;
  userAction?: string;
}

const THROTTLED: Expected = { read: "transient", create: "transient", retryAfterMs: 10 * MINUTE };
const AUTH: Expected = {
  read: "auth_revoked",
  create: "auth_revoked",
  userAction: "reauthorize_destination",
};
const SERVER: Expected = { read: "transient", create: "outcome_unknown" };
const EDIT: Expected = { read: "rejected", create: "rejected", userAction: "edit_post" };
const ACCOUNT: Expected = { read: "rejected", create: "rejected", userAction: "check_account" };
const WAIT: Expected = { read: "transient", create: "transient" };

/** [code, subcode, expected]: Graph "Handling Errors", rate limiting, Instagram "Error Codes". */
const CASES: [number, number | null, Expected][] = [
  [1, null, SERVER],
  [2, null, SERVER],
  [4, null, THROTTLED],
  [17, null, THROTTLED],
  [32, null, THROTTLED],
  [613, null, THROTTLED],
  [341, null, THROTTLED],
  [80000, null, THROTTLED],
  [80004, null, THROTTLED],
  [80009, null, THROTTLED],
  [80014, null, THROTTLED],
  [10, null, AUTH],
  [200, null, AUTH],
  [299, null, AUTH],
  [102, null, AUTH],
  [190, null, AUTH],
  [190, 463, AUTH],
  [368, null, EDIT],
  [506, null, EDIT],
  [1609005, null, EDIT],
  [-2, 2207003, SERVER],
  [-2, 2207020, SERVER],
  [-1, 2207001, SERVER],
  [-1, 2207032, SERVER],
  [-1, 2207053, SERVER],
  [1, 2207057, EDIT],
  [4, 2207051, ACCOUNT],
  [9, 2207042, { read: "transient", create: "transient", retryAfterMs: 60 * MINUTE }],
  [25, 2207050, ACCOUNT],
  [100, 2207023, EDIT],
  [100, 2207028, EDIT],
  [352, 2207026, EDIT],
  [9004, 2207052, EDIT],
  [9007, 2207027, WAIT],
  [36000, 2207004, EDIT],
  [36001, 2207005, EDIT],
  [36003, 2207009, EDIT],
];

async function classify(code: number, subcode: number | null, idempotent: boolean, headers = {}) {
  const spec = { message: `error ${code}`, code, ...(subcode === null ? {} : { subcode }) };
  const response = new Response(JSON.stringify(graphErrorBody(spec)), {
    status: 400,
    headers: { "content-type": "application/json", ...headers },
  });
  return metaGraphError({ operation: "POST /x", response, clock: new ManualClock(NOW), idempotent });
}

describe("Meta's error table, pair by pair", () => {
  test.each(CASES)("code %p, subcode %p", async (code, subcode, expected) => {
    const read = await classify(code, subcode, true);
    const create = await classify(code, subcode, false);
    expect([read.kind, create.kind]).toEqual([expected.read, expected.create]);
    expect(read.errorCode).toBe(String(code));
    expect(read.subcode).toBe(subcode === null ? null : String(subcode));
    expect(read.retryAt).toBe(expected.retryAfterMs === undefined ? null : NOW + expected.retryAfterMs);
    if (expected.userAction) expect(postErrorFrom(read).user_action).toBe(expected.userAction);
    expect(isMetaWait(read)).toBe(expected === WAIT);
  });

  test("every row of the table has its case here", () => {
    for (const row of META_ERROR_TABLE) {
      const codes = typeof row.code === "number" ? [row.code] : [row.code[0], row.code[1]];
      for (const code of codes)
        expect(
          CASES.some(([c, s]) => c === code && s === row.subcode),
          `${code}/${row.subcode}`,
        ).toBe(true);
    }
  });

  test("a subcode row wins over its code: 4 is throttling, 4/2207051 (suspected spam) is not", async () => {
    expect(classifyMetaError({ code: 4, subcode: 1234567 })).toEqual({
      kind: "throttled",
      fallbackMs: META_THROTTLE_FALLBACK_MS,
    });
    expect(classifyMetaError({ code: 4, subcode: 2207051 })).toEqual({
      kind: "permanent",
      userAction: "check_account",
    });
    expect(classifyMetaError({ code: 9, subcode: 2207042 })).toEqual({
      kind: "throttled",
      fallbackMs: META_PUBLISHING_LIMIT_FALLBACK_MS,
    });
  });

  test("2207051 keeps Meta's message, says no automatic retry follows, and is not_retryable", async () => {
    const response = new Response(
      JSON.stringify(
        graphErrorBody({
          message:
            "We restrict certain activity to protect our community. Tell us if you think we made a mistake.",
          code: 4,
          subcode: 2207051,
        }),
      ),
      { status: 400, headers: bucHeader(30) },
    );
    const error = await metaGraphError({
      operation: "POST /{ig-user-id}/media_publish",
      response,
      clock: new ManualClock(NOW),
      idempotent: false,
    });
    expect(error.kind).toBe("rejected");
    expect(error.retryAt).toBeNull();
    expect(error.message).toContain("We restrict certain activity to protect our community");
    expect(error.message).toContain("(Graph error 4/2207051)");
    expect(error.message).toContain("does not retry it automatically");
    expect(postErrorFrom(error)).toMatchObject({
      code: "provider_rejected",
      retryable: false,
      retry_safety: "not_retryable",
      user_action: "check_account",
    });
  });

  test("a throttled pair takes Meta's BUC estimate over its fallback", async () => {
    const error = await classify(4, null, true, bucHeader(30));
    expect(error.retryAt).toBe(NOW + 30 * MINUTE);
  });

  test("pairs in no row: Meta's is_transient decides, else the post is refused (edit_post)", async () => {
    expect(classifyMetaError({ code: 100, subcode: 33 })).toEqual({
      kind: "permanent",
      userAction: "edit_post",
    });
    expect(classifyMetaError({ code: 100, subcode: null, isTransient: true })).toEqual({ kind: "server" });
    expect(classifyMetaError({ code: null, subcode: null })).toEqual({
      kind: "permanent",
      userAction: "edit_post",
    });
  });

  test("codes written as strings (as Graph sometimes does) are read, negative ones too", async () => {
    const response = new Response(
      JSON.stringify({ error: { message: "Instagram server error", code: "-1", error_subcode: "2207001" } }),
      { status: 400 },
    );
    const error = await metaGraphError({
      operation: "GET /x",
      response,
      clock: new ManualClock(NOW),
      idempotent: true,
    });
    expect([error.kind, error.errorCode, error.subcode]).toEqual(["transient", "-1", "2207001"]);
  });
});
