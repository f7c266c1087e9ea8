import type { NetworkRules } from "./types.ts";

/**
 * The networks whose publishing adapters have not landed yet: what Herald already enforces for them
 * (documented daily caps from shared/reference/providers.md). Posts to them can be drafted and
 * scheduled; an attempt to publish fails with `destination_unavailable`. Each network's issue
 * replaces its entry with a full adapter file.
 */
export const PENDING_NETWORKS: NetworkRules[] = [
  {
    channel: "instagram",
    displayName: "Instagram",
    optionsSchema: null,
    supportsThreads: false,
    // The documented content_publishing_limit quota_total.
    dailyCap: 50,
    monthlyPostLimit: null,
  },
  {
    channel: "youtube",
    displayName: "YouTube",
    optionsSchema: null,
    supportsThreads: false,
    // Uploads a day per project (quota units).
    dailyCap: 100,
    monthlyPostLimit: null,
  },
  {
    channel: "facebook",
    displayName: "Facebook",
    optionsSchema: null,
    supportsThreads: false,
    dailyCap: null,
    monthlyPostLimit: null,
  },
  {
    channel: "tiktok",
    displayName: "TikTok",
    optionsSchema: null,
    supportsThreads: false,
    dailyCap: null,
    monthlyPostLimit: null,
  },
];
