import { createBlueskyAdapter } from "./bluesky.ts";
import { createMastodonAdapter, type MastodonDeps } from "./mastodon.ts";
import type { Channel, OAuthConnector, PasswordConnector, ProviderAdapter } from "./types.ts";

/** The adapters Herald has, built once with the same injected fetch, clock and timeout. */
export interface ProviderRegistry {
  /** The adapter for a channel, or null for a channel Herald cannot publish to yet. */
  adapter(channel: Channel): ProviderAdapter | null;
  mastodon: ProviderAdapter & OAuthConnector;
  bluesky: ProviderAdapter & PasswordConnector;
}

/** Builds every adapter; only Mastodon and Bluesky exist so far, other channels answer null. */
export function createProviderRegistry(deps: MastodonDeps): ProviderRegistry {
  const mastodon = createMastodonAdapter(deps);
  const bluesky = createBlueskyAdapter(deps);
  const byChannel: Partial<Record<Channel, ProviderAdapter>> = { mastodon, bluesky };
  return { adapter: (channel) => byChannel[channel] ?? null, mastodon, bluesky };
}
