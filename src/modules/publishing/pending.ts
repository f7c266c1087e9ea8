import type { ProviderPending, StoredProviderPending } from "../../db/pending.ts";
import type { Herald } from "../../herald.ts";

/** A pending item as stored: its adapter data sealed with the server's key. */
export function sealPending(h: Herald, pending: ProviderPending): StoredProviderPending {
  return {
    item_index: pending.item_index,
    since: pending.since,
    sealed: h.secrets.encrypt(JSON.stringify(pending.data)),
    ...(pending.unconfirmed ? { unconfirmed: true } : {}),
  };
}

/** A stored pending item opened for its adapter (rows from before sealing are read as they are). */
export function openPending(h: Herald, stored: StoredProviderPending | null): ProviderPending | null {
  if (!stored) return null;
  if (!("sealed" in stored)) return stored;
  const data = JSON.parse(h.secrets.decrypt(stored.sealed)) as Record<string, unknown>;
  const unconfirmed = stored.unconfirmed ? { unconfirmed: true as const } : {};
  return { item_index: stored.item_index, since: stored.since, data, ...unconfirmed };
}

/** The mark of an item whose create call went out unanswered at `since`: looked up before it is sent again. */
export function unconfirmedItem(itemIndex: number, since: number): ProviderPending {
  return { item_index: itemIndex, since, data: {}, unconfirmed: true };
}
