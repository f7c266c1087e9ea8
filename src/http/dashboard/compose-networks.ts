import { THREADS_REPLY_CONTROLS } from "../../providers/threads/rules.ts";
import { TIKTOK_PRIVACY_LEVELS } from "../../providers/tiktok/rules.ts";

// The per-network fields of the compose form: what each adapter accepts in `destination_options`
// (read from its `optionsSchema`), with labels. Only the networks of the chosen destinations are shown.

/** One option field of a network (`destination_options.<channel>.<key>`). */
export type OptionField =
  | { kind: "select"; key: string; label: string; choices: string[][]; hint?: string }
  | { kind: "yesno"; key: string; label: string; hint?: string }
  | { kind: "flag"; key: string; label: string }
  | { kind: "flags"; key: string; label: string; choices: string[] }
  | { kind: "text"; key: string; label: string; hint?: string; list?: boolean; integer?: boolean };

/** The options a network's adapter accepts (its `optionsSchema`), and whether it takes alt text. */
export interface NetworkOptions {
  channel: string;
  name: string;
  altText: boolean;
  hint?: string;
  fields: OptionField[];
}

const plain = (values: readonly string[]) => values.map((v) => [v, v.replaceAll("_", " ").toLowerCase()]);

export const NETWORK_OPTIONS: NetworkOptions[] = [
  {
    channel: "bluesky",
    name: "Bluesky",
    altText: true,
    hint: "Bluesky requires alt text for every image.",
    fields: [
      {
        kind: "text",
        key: "languages",
        label: "Languages",
        list: true,
        hint: "Up to three codes, comma-separated (en, pt-BR).",
      },
      {
        kind: "flags",
        key: "content_labels",
        label: "Content labels",
        choices: ["sexual", "nudity", "porn", "graphic-media"],
      },
    ],
  },
  { channel: "x", name: "X", altText: true, fields: [] },
  {
    channel: "threads",
    name: "Threads",
    altText: true,
    fields: [
      {
        kind: "select",
        key: "reply_control",
        label: "Who can reply",
        choices: plain(THREADS_REPLY_CONTROLS),
      },
    ],
  },
  { channel: "instagram", name: "Instagram", altText: true, fields: [] },
  {
    channel: "linkedin",
    name: "LinkedIn",
    altText: false,
    fields: [
      {
        kind: "select",
        key: "visibility",
        label: "Visibility",
        choices: [
          ["public", "Anyone"],
          ["connections", "Connections only"],
        ],
      },
      { kind: "yesno", key: "allow_resharing", label: "Allow resharing" },
    ],
  },
  {
    channel: "tiktok",
    name: "TikTok",
    altText: false,
    hint: "TikTok requires choosing who can see the post.",
    fields: [
      {
        kind: "select",
        key: "privacy_level",
        label: "Who can see it",
        choices: plain(TIKTOK_PRIVACY_LEVELS),
      },
      { kind: "flag", key: "disable_comment", label: "Turn off comments" },
      { kind: "flag", key: "disable_duet", label: "Turn off duets" },
      { kind: "flag", key: "disable_stitch", label: "Turn off stitches" },
      { kind: "flag", key: "brand_content_toggle", label: "Branded content (paid partnership)" },
      { kind: "flag", key: "brand_organic_toggle", label: "Promotes your own brand" },
      { kind: "flag", key: "is_aigc", label: "Made with AI" },
      {
        kind: "text",
        key: "video_cover_timestamp_ms",
        label: "Cover frame (milliseconds into the video)",
        integer: true,
      },
    ],
  },
  {
    channel: "youtube",
    name: "YouTube",
    altText: false,
    hint: "The video's title is the first line of item 1; the whole text is its description.",
    fields: [
      {
        kind: "select",
        key: "privacy_status",
        label: "Privacy",
        choices: [
          ["public", "Public"],
          ["unlisted", "Unlisted"],
          ["private", "Private"],
        ],
      },
      { kind: "yesno", key: "made_for_kids", label: "Made for kids" },
      {
        kind: "text",
        key: "category_id",
        label: "Category id",
        hint: "A number, such as 22 (People & Blogs).",
      },
      { kind: "text", key: "tags", label: "Tags", list: true, hint: "Comma-separated." },
      { kind: "yesno", key: "notify_subscribers", label: "Notify subscribers" },
    ],
  },
  {
    channel: "facebook",
    name: "Facebook",
    altText: false,
    fields: [{ kind: "text", key: "link", label: "Link to share", hint: "An http(s) address." }],
  },
];
