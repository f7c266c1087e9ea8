import { BLUESKY_NETWORK } from "./bluesky/adapter.ts";
import { FACEBOOK_NETWORK } from "./facebook/adapter.ts";
import { INSTAGRAM_NETWORK } from "./instagram/adapter.ts";
import { LINKEDIN_NETWORK } from "./linkedin/adapter.ts";
import { MASTODON_NETWORK, type MastodonDeps } from "./mastodon/adapter.ts";
import { THREADS_NETWORK } from "./threads/adapter.ts";
import { TIKTOK_NETWORK } from "./tiktok/adapter.ts";
import { X_NETWORK } from "./x/adapter.ts";
import { YOUTUBE_NETWORK } from "./youtube/adapter.ts";
import {
  CHANNELS,
  type AdapterDeps,
  type Channel,
  type NetworkRules,
  type ProviderAdapter,
} from "./types.ts";

/** What the registry builds adapters with (Mastodon's media poll settings included). */
export type RegistryDeps = AdapterDeps & MastodonDeps;

/** A network that publishes: its rules and how its adapter is built. */
interface PublishingNetwork {
  rules: NetworkRules;
  create(deps: RegistryDeps): ProviderAdapter;
}

/** The networks Herald publishes to, all nine of the contract: one line each (and its adapter files). */
const PUBLISHING_NETWORKS: PublishingNetwork[] = [
  BLUESKY_NETWORK,
  FACEBOOK_NETWORK,
  INSTAGRAM_NETWORK,
  MASTODON_NETWORK,
  THREADS_NETWORK,
  LINKEDIN_NETWORK,
  TIKTOK_NETWORK,
  X_NETWORK,
  YOUTUBE_NETWORK,
];

/**
 * Every channel's rules, in the contract's channel order. Static, so request schemas, OpenAPI
 * enums, option schemas and caps derive from it at start.
 */
export const NETWORK_RULES: readonly NetworkRules[] = CHANNELS.map((channel) => {
  const rules = PUBLISHING_NETWORKS.find((n) => n.rules.channel === channel)?.rules;
  if (!rules) throw new Error(`no rules for channel ${channel}`);
  return rules;
});

/** The rules of a channel (every channel of the contract has some). */
export function networkRules(channel: Channel | string): NetworkRules | null {
  return NETWORK_RULES.find((n) => n.channel === channel) ?? null;
}

/** The adapters Herald has, built once with the same injected fetch, clock and timeout. */
export interface ProviderRegistry {
  /** The adapter for a channel, or null for a channel Herald cannot publish to yet. */
  adapter(channel: Channel | string): ProviderAdapter | null;
  /** Every adapter, in the contract's channel order. */
  adapters: ProviderAdapter[];
}

/** Builds every adapter of PUBLISHING_NETWORKS. */
export function createProviderRegistry(deps: RegistryDeps): ProviderRegistry {
  const adapters = CHANNELS.flatMap((channel) => {
    const network = PUBLISHING_NETWORKS.find((n) => n.rules.channel === channel);
    return network ? [network.create(deps)] : [];
  });
  return { adapter: (channel) => adapters.find((a) => a.channel === channel) ?? null, adapters };
}
