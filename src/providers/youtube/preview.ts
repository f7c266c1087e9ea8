// How a YouTube video Herald uploads will look: the player (16:9, or 9:16 for a vertical Short), the
// title (the first line of the text), the first three hashtags above it (none when there are more than
// 15: YouTube ignores them all), the channel, privacy, and the description (the whole text) folded after
// three lines behind "...more", its links and hashtags linked.
import type { PreviewInput } from "../../http/previews/index.ts";
import {
  authorLine,
  findLinks,
  findTags,
  html,
  mediaGrid,
  note,
  ordered,
  postText,
  previewSection,
  whenText,
  extraItems,
} from "../../http/previews/kit.ts";
import { titleOf } from "./rules.ts";

const PRIVACY: Record<string, string> = { public: "Public", unlisted: "Unlisted", private: "Private" };

export function youtubePreview(input: PreviewInput) {
  const item = input.items[0] ?? { body: "", media: [] };
  const headline = (item.body.split("\n")[0] ?? "").trim().slice(0, 100);
  const title = titleOf({ headline, text: item.body });
  const tags = findTags(item.body);
  const above = tags.length <= 15 ? tags.slice(0, 3).map((t) => item.body.slice(t.start, t.end)) : [];
  const video = item.media[0];
  const vertical = video?.width && video.height ? video.height > video.width : false;
  const privacy = PRIVACY[String(input.options.privacy_status ?? "public")] ?? "Public";
  const post = html`${mediaGrid(item.media.slice(0, 1), { kind: "grid", altBadge: false, frame: vertical ? "tall" : "wide" })}
${above.length > 0 ? html`<p class="pv-tags">${above.map((t) => html`<span class="pv-entity">${t}</span> `)}</p>` : null}
<p class="pv-title">${title || "(no title)"}</p>
${authorLine({ author: input.author, at: whenText(input.at), extra: privacy })}
${postText(item.body, ordered(findLinks(item.body), tags), { lines: 3, chars: 200, more: "...more" })}`;
  return previewSection({
    network: "YouTube",
    slug: "youtube",
    posts: [post],
    notes: [
      tags.length > 15 ? note("More than 15 hashtags: YouTube ignores all of them.") : null,
      extraItems(input, "YouTube"),
    ],
  });
}
