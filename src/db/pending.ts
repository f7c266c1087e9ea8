/**
 * A body item the network accepted and is still processing (a container), stored with its post
 * while the post is `awaiting-provider`: which item, what the adapter's status check needs, and since
 * when (epoch ms).
 */
export interface ProviderPending {
  item_index: number;
  data: Record<string, unknown>;
  since: number;
  /**
   * The item's create call may have reached the network unanswered (a timeout, a process that died
   * mid-call): the next run asks the network (`reconcileItem`) before anything is sent.
   */
  unconfirmed?: true;
}

/**
 * How a pending item is stored: `data` sealed with the server's key, as provider tokens are, since it
 * can hold capabilities (TikTok's one-hour upload URL, YouTube's resumable session URI). Rows written
 * before sealing hold `data` as it was and are still read (publishing/pending.ts).
 */
export type StoredProviderPending =
  | { item_index: number; since: number; sealed: string; unconfirmed?: true }
  | ProviderPending;
