import { sha256Hex } from "../../lib/crypto.ts";
import { inLockedTransaction, inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { invalid, ProblemError } from "../../core/problem.ts";
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  deleteIdempotencyKey,
  findIdempotencyKey,
} from "./repo.ts";
import { canonicalJson } from "../../lib/canonical-json.ts";

/** How long a key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

// Headers worth replaying with a stored result.
const REPLAYED_HEADERS = ["etag", "location", "retry-after", "link"];

/** What an idempotent operation needs to know about its request. */
export interface IdempotentRequest {
  accountId: string;
  request: Request;
  body: unknown;
  /** Required on this operation (a missing key is a 400), or optional (a missing key runs plainly). */
  required: boolean;
  /**
   * The operation is database work only: the key, the work and the stored result then commit in one
   * transaction (never a key left in flight by a crash, one commit instead of three). Operations that
   * call out (files, networks) keep their own transactions so no lock is held meanwhile.
   */
  atomic?: boolean;
  /**
   * An atomic operation whose invariants are held by unique indexes and row locks: its transaction
   * runs at READ COMMITTED on PostgreSQL (`inLockedTransaction`), the key's own included.
   */
  locked?: boolean;
  /**
   * Top-level fields of the JSON answer shown once and never stored (a one-time link): a replay answers
   * the rest without them.
   */
  shownOnce?: string[];
}

/** The answer's text as stored for replays: without the fields that are shown once. */
function storedBody(text: string, shownOnce: string[] | undefined): string {
  if (!shownOnce?.length) return text;
  const parsed = JSON.parse(text) as Record<string, unknown>;
  if (!parsed || typeof parsed !== "object") return text;
  for (const field of shownOnce) delete parsed[field];
  return JSON.stringify(parsed);
}

/**
 * The hash stored with a key: method, path, account and the body in canonical form (keys sorted), so
 * the same input in another key order is the same request.
 */
export function idempotencyRequestHash(
  method: string,
  path: string,
  accountId: string,
  body: unknown,
): string {
  return sha256Hex(canonicalJson([method, path, accountId, body ?? null]));
}

/** The longest Idempotency-Key the API takes (the MCP tools' `idempotency_key` argument too). */
export const IDEMPOTENCY_KEY_MAX = 200;

/** The Idempotency-Key of a request, validated (1–200 characters); null when absent and optional. */
export function idempotencyKeyOf(request: Request, required: boolean): string | null {
  const key = request.headers.get("idempotency-key");
  if (key === null) {
    if (required)
      throw invalid(
        "",
        "this operation needs an Idempotency-Key header (1 to 200 characters)",
        "Idempotency-Key",
      );
    return null;
  }
  if (key.length < 1 || key.length > IDEMPOTENCY_KEY_MAX)
    throw invalid("", "must be 1 to 200 characters", "Idempotency-Key");
  return key;
}

/**
 * Runs `operation` at most once per Idempotency-Key: the first result (status, body, key headers)
 * is stored with a hash of method, path, account and body; the same key and input replays it; other
 * input is 409 `public_idempotency_key_reused`; a key whose first request is still running, or
 * died before finishing, is 409 `public_idempotency_outcome_unknown`.
 */
export async function runIdempotent(
  h: Herald,
  req: IdempotentRequest,
  operation: () => Promise<Response> | Response,
): Promise<Response> {
  const key = idempotencyKeyOf(req.request, req.required);
  if (key === null) return operation();
  // Every step below takes its own transaction, or joins the one opened here.
  if (req.atomic)
    return (req.locked ? inLockedTransaction : inTransaction)(h.db, () => runWithKey(h, req, key, operation));
  return runWithKey(h, req, key, operation);
}

async function runWithKey(
  h: Herald,
  req: IdempotentRequest,
  key: string,
  operation: () => Promise<Response> | Response,
): Promise<Response> {
  const url = new URL(req.request.url);
  const requestHash = idempotencyRequestHash(req.request.method, url.pathname, req.accountId, req.body);
  const now = h.clock.now();

  const replay = await inTransaction(h.db, async (tx) => {
    const row = {
      accountId: req.accountId,
      key,
      requestHash,
      createdAt: now,
      expiresAt: now + IDEMPOTENCY_TTL_MS,
    };
    // The key is claimed first (one statement for a new key); a held key is then read. A key that
    // disappears in between (expired and cleaned up) is claimed again.
    for (let attempt = 1; ; attempt++) {
      if (await claimIdempotencyKey(tx, row)) return null;
      const existing = await findIdempotencyKey(tx, req.accountId, key);
      if (!existing && attempt < 3) continue;
      if (!existing) throw new Error("the idempotency key was neither free nor held");
      if (existing.expiresAt <= now) {
        await deleteIdempotencyKey(tx, req.accountId, key);
        continue;
      }
      if (existing.requestHash !== requestHash) {
        throw new ProblemError(
          "public_idempotency_key_reused",
          "This Idempotency-Key was already used with a different request; use a new key for new work.",
        );
      }
      if (existing.state === "in_flight") {
        throw new ProblemError(
          "public_idempotency_outcome_unknown",
          "An earlier request with this Idempotency-Key has not finished, or its result was lost. " +
            "Inspect the resource before creating new work.",
          { retrySafety: "not_retryable" },
        );
      }
      return existing;
    }
  });
  if (replay) {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "idempotent-replayed": "true",
      ...JSON.parse(replay.responseHeaders ?? "{}"),
    };
    return new Response(replay.responseBody, { status: replay.responseStatus ?? 200, headers });
  }

  let response: Response;
  try {
    response = await operation();
  } catch (error) {
    // A refused request changed nothing: free the key so the corrected request can use it. Any other
    // failure may have happened after a commit, so the key stays in flight: its outcome is unknown.
    // An atomic request's key goes with its rolled-back transaction (which on PostgreSQL may already
    // have failed, on a unique index, and would refuse another statement).
    if (error instanceof ProblemError && !req.atomic)
      await inTransaction(h.db, (tx) => deleteIdempotencyKey(tx, req.accountId, key));
    throw error;
  }
  const body = storedBody(await response.clone().text(), req.shownOnce);
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  await inTransaction(h.db, (tx) =>
    completeIdempotencyKey(tx, req.accountId, key, { status: response.status, body, headers }),
  );
  return response;
}
