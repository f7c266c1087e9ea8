import { t } from "elysia";
import { Timestamp } from "../docs.ts";

/** One short link of a post and its clicks. */
export const TrackedLink = t.Object(
  {
    object: t.Literal("tracked_link"),
    code: t.String({ description: "The short code (10 base62 characters)" }),
    short_url: t.String({ description: "What the post published: <HERALD_BASE_URL>/l/{code}" }),
    url: t.String({ description: "The URL as the post's body wrote it" }),
    target: t.String({ description: "Where the short link redirects: url with the UTM presets added" }),
    clicks: t.Integer({ description: "Clicks counted so far (GET only; HEAD is not counted)" }),
    created_at: Timestamp,
  },
  { title: "TrackedLink" },
);
