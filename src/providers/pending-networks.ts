import { Type } from "@sinclair/typebox";
import type { NetworkRules } from "./types.ts";

/** A URL as X finds one in text (scheme, `www.` or a bare domain with a common TLD). */
const COMMON_TLDS = "com|org|net|io|co|dev|app|ly|me|gg|xyz|info|biz|us|uk|de|fr";
const URL_IN_TEXT = new RegExp(
  String.raw`\b(?:https?:\/\/|www\.)\S+|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:${COMMON_TLDS})(?:\/\S*)?\b`,
  "i",
);

/**
 * The networks whose publishing adapters have not landed yet: what Herald already enforces for them
 * (documented daily caps from shared/reference/providers.md, X's URL rule and monthly limit,
 * LinkedIn's options). Posts to them can be drafted and scheduled; an attempt to publish fails with
 * `destination_unavailable`. Each network's issue replaces its entry with a full adapter file.
 */
export const PENDING_NETWORKS: NetworkRules[] = [
  {
    channel: "x",
    displayName: "X",
    optionsSchema: null,
    checkItem: ({ text }) =>
      URL_IN_TEXT.test(text) ? [{ pointer: "", detail: "X bodies cannot contain URLs" }] : [],
    supportsThreads: true,
    // 300 posts per 3 h per user.
    dailyCap: 2_400,
    monthlyPostLimit: 50,
  },
  {
    channel: "threads",
    displayName: "Threads",
    optionsSchema: null,
    supportsThreads: true,
    dailyCap: 250,
    monthlyPostLimit: null,
  },
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
    channel: "linkedin",
    displayName: "LinkedIn",
    optionsSchema: Type.Object(
      {
        visibility: Type.Optional(Type.Union([Type.Literal("public"), Type.Literal("connections")])),
        allow_resharing: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false },
    ),
    supportsThreads: false,
    dailyCap: null,
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
