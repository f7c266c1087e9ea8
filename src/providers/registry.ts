import { ConfigError, type NetworkSettings } from "../config.ts";
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
  type NetworkApp,
  type NetworkOrigins,
  type NetworkRules,
  type ProviderAdapter,
} from "./types.ts";

/** What an adapter is built with (Mastodon's media poll settings included). */
export type NetworkDeps = AdapterDeps & MastodonDeps;

/**
 * One network, as its folder exports it (`<NETWORK>_NETWORK` in `src/providers/<network>/adapter.ts`):
 * its rules, the origins it lives at unless the operator says otherwise, and how its adapter is built.
 */
export interface NetworkDefinition {
  rules: NetworkRules;
  origins: NetworkOrigins;
  /**
   * For a network that pins an API version per request (LinkedIn's `LinkedIn-Version`): the default
   * and the format HERALD_<CH>_API_VERSION must have. Without it, setting that variable stops the start.
   */
  apiVersion?: NetworkApiVersion;
  create(deps: NetworkDeps): ProviderAdapter;
}

/** An API version a network lets the operator choose (HERALD_<CH>_API_VERSION). */
export interface NetworkApiVersion {
  default: string;
  pattern: RegExp;
  /** The format for the start-up message, e.g. "YYYYMM (like 202610)". */
  format: string;
}

/** The networks Herald publishes to, all nine of the contract: one line each (and the network's folder). */
export const NETWORKS: readonly NetworkDefinition[] = [
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
 * Every channel's rules, in the contract's channel order. Static, so the request schemas and the
 * OpenAPI document (the contract's nine channels) derive from it at start.
 */
export const NETWORK_RULES: readonly NetworkRules[] = CHANNELS.map((channel) => {
  const rules = NETWORKS.find((n) => n.rules.channel === channel)?.rules;
  if (!rules) throw new Error(`no rules for channel ${channel}`);
  return rules;
});

/**
 * The rules of a channel of the contract (options arrive only for those: the request schema admits no
 * other); everything else asks the registry Herald was built with (`h.providers.adapter`).
 */
export function networkRules(channel: Channel | string): NetworkRules | null {
  return NETWORK_RULES.find((n) => n.channel === channel) ?? null;
}

/** The adapters Herald has, built once with the same injected fetch, clock and timeout. */
export interface ProviderRegistry {
  /** The adapter for a channel, or null for a channel Herald cannot publish to. */
  adapter(channel: Channel | string): ProviderAdapter | null;
  /** Every adapter: the contract's channel order, then networks registered beside the nine. */
  adapters: ProviderAdapter[];
  /** A channel's app settings with the network's own origins where the operator set none. */
  app(channel: Channel | string): NetworkApp | null;
}

/** What the registry is built with: the adapters' deps, with the operator's settings for `apps`. */
export type RegistryDeps = Omit<NetworkDeps, "apps"> & {
  /** `config.networks`: HERALD_<CH>_* by channel. */
  settings: Record<string, NetworkSettings>;
};

/** A network's app: the operator's settings over the origins the network documents. */
export function networkApp(
  network: Pick<NetworkDefinition, "origins" | "apiVersion">,
  settings: NetworkSettings | undefined,
): NetworkApp {
  const { origins } = network;
  const apiBase = settings?.apiBase ?? origins.api;
  return {
    clientId: settings?.clientId ?? null,
    clientSecret: settings?.clientSecret ?? null,
    apiBase,
    authBase: settings?.authBase ?? origins.auth,
    tokenBase: settings?.tokenBase ?? origins.token ?? apiBase,
    scopes: settings?.scopes ?? null,
    apiVersion: network.apiVersion ? (settings?.apiVersion ?? network.apiVersion.default) : null,
  };
}

/**
 * Refuses, at start, an API version the network would not understand or a network that takes none:
 * a one-line ConfigError naming the variable, rather than every call failing later.
 */
export function checkApiVersion(network: NetworkDefinition, settings: NetworkSettings | undefined): void {
  const value = settings?.apiVersion ?? null;
  if (value === null) return;
  const name = `HERALD_${network.rules.channel.toUpperCase()}_API_VERSION`;
  if (!network.apiVersion)
    throw new ConfigError(`${name} is not a setting: Herald does not choose an API version for this network`);
  if (!network.apiVersion.pattern.test(value))
    throw new ConfigError(`${name} must be ${network.apiVersion.format}, got ${JSON.stringify(value)}`);
}

/**
 * Builds every adapter of `networks`: by default the nine of NETWORKS. A caller building Herald
 * in-process may pass more (`openHerald(config, { networks })`); those are connected, checked,
 * published and measured like the nine, while the request schemas and the OpenAPI document stay
 * the contract's (their channel is not in its enums, so posts reach them by `destination_id`).
 */
export function createProviderRegistry(
  deps: RegistryDeps,
  networks: readonly NetworkDefinition[] = NETWORKS,
): ProviderRegistry {
  const ordered = [
    ...CHANNELS.flatMap((channel) => networks.filter((n) => n.rules.channel === channel)),
    ...networks.filter((n) => !(CHANNELS as readonly string[]).includes(n.rules.channel)),
  ];
  for (const n of ordered) checkApiVersion(n, deps.settings[n.rules.channel]);
  const apps: Record<string, NetworkApp> = Object.fromEntries(
    ordered.map((n) => [n.rules.channel, networkApp(n, deps.settings[n.rules.channel])]),
  );
  const { settings: _, ...adapterDeps } = deps;
  const adapters = ordered.map((n) => n.create({ ...adapterDeps, apps }));
  return {
    adapter: (channel) => adapters.find((a) => a.channel === channel) ?? null,
    adapters,
    app: (channel) => apps[channel] ?? null,
  };
}
