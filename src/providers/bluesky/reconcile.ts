// What became of a Bluesky item whose createRecord went unanswered: Herald chose its record key
// (tid.ts), so one read of that key (com.atproto.repo.getRecord) tells. Found: the receipt, built as
// publishItem builds it. RecordNotFound: it was not made, and sending it again under the same key
// cannot make a second record.
import { expectJson, providerFetch, readJson } from "../http.ts";
import {
  ProviderError,
  type ProviderDeps,
  type PublishedItem,
  type PublishItemInput,
  type ReconcileResult,
} from "../types.ts";
import type { BlueskyCredentials } from "./adapter.ts";
import { blueskyReceipt } from "./publish.ts";
import { itemRecordKey } from "./tid.ts";
import { base, blueskyRetryAt } from "./xrpc.ts";

/**
 * Reads the item's record by its key (a public read: no session needed, so an expired token cannot
 * stand in the way). A record that is not the item (other text, another reply parent) is `unknown`:
 * the key was taken by something Herald did not send, and a person must look.
 */
export async function reconcileBlueskyItem(
  deps: ProviderDeps,
  input: { item: PublishItemInput; since: number },
): Promise<ReconcileResult> {
  const { item } = input;
  const { destination } = item;
  const did = (destination.credentials as Partial<BlueskyCredentials>).did ?? destination.externalId;
  const rkey = itemRecordKey(item);
  const operation = "com.atproto.repo.getRecord";
  const query = new URLSearchParams({ repo: did, collection: "app.bsky.feed.post", rkey });
  // Errors every read shares (5xx, 429, no answer) are thrown `transient`: the engine asks again later.
  const response = await providerFetch({
    deps,
    operation,
    url: `${base(destination.origin)}/xrpc/${operation}?${query}`,
    idempotent: true,
    retryAt: blueskyRetryAt,
  });
  const at = `at://${did}/app.bsky.feed.post/${rkey}`;
  if (!response.ok) {
    const body = await readJson(response);
    if (response.status === 400 && body?.error === "RecordNotFound")
      return { state: "absent", reason: `the PDS has no record ${at}` };
    const said = (typeof body?.message === "string" && body.message) || body?.error || "no reason given";
    return { state: "unknown", reason: `reading ${at} answered HTTP ${response.status} (${said})` };
  }
  const found = await expectJson({ operation, response });
  if (typeof found.uri !== "string" || typeof found.cid !== "string")
    throw new ProviderError("transient", `${operation}: the answer has no uri and cid`, { operation });
  const mismatch = differenceFrom(found.value, item);
  if (mismatch) return { state: "unknown", reason: `the record ${found.uri} under Herald's key ${mismatch}` };
  return {
    state: "published",
    item: blueskyReceipt({ destination, uri: found.uri, cid: found.cid, operation, response }),
  };
}

/** Why a stored record is not this item (its text and reply refs as publishItem writes them), or null. */
function differenceFrom(value: unknown, item: PublishItemInput): string | null {
  const record = (value ?? {}) as {
    text?: unknown;
    reply?: { root?: { uri?: unknown }; parent?: { uri?: unknown } };
  };
  if (record.text !== item.text) return "holds other text";
  const parent = uriOf(item.parent);
  const root = uriOf(item.root ?? item.parent);
  if ((record.reply?.parent?.uri ?? null) !== parent || (record.reply?.root?.uri ?? null) !== root)
    return parent
      ? "does not reply to the thread's previous item"
      : "is a reply, not the thread's first item";
  return null;
}

function uriOf(item: PublishedItem | null): string | null {
  return item ? ((item.extra.uri as string | undefined) ?? item.providerObjectId) : null;
}
