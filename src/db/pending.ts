/**
 * A body item the network accepted and is still processing (a container), stored with its post
 * while the post is `awaiting-provider`: which item, what the adapter's status check needs, and since
 * when (epoch ms). Not secret: adapters keep tokens out of `data`.
 */
export interface ProviderPending {
  item_index: number;
  data: Record<string, unknown>;
  since: number;
}
