import type { ProviderPending, StoredProviderPending } from "../../db/pending.ts";
import type { Herald } from "../../herald.ts";

/** A pending item as stored: its adapter data sealed with the server's key. */
export function sealPending(h: Herald, pending: ProviderPending): StoredProviderPending {
  return {
    item_index: pending.item_index,
    since: pending.since,
    sealed: h.secrets.encrypt(JSON.stringify(pending.data)),
  };
}

/** A stored pending item opened for its adapter (rows from before sealing are read as they are). */
export function openPending(h: Herald, stored: StoredProviderPending | null): ProviderPending | null {
  if (!stored) return null;
  if (!("sealed" in stored)) return stored;
  const data = JSON.parse(h.secrets.decrypt(stored.sealed)) as Record<string, unknown>;
  return { item_index: stored.item_index, since: stored.since, data };
}
