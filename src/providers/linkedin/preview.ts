// How a LinkedIn post Herald sends will look. Herald escapes every reserved "little text" character, so
// LinkedIn shows the text as written: #hashtags become hashtags, @names stay plain text (Herald makes no
// mentions), links are linked but get no card (Herald sends no article). Name, time · visibility;
// ~210 characters or three lines, then "…see more"; one video or images in a grid.
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

/** Where LinkedIn's desktop feed folds commentary (third-party measures). */
const LINKEDIN_FOLD = { chars: 210, lines: 3, more: "…see more" };

export function linkedinPreview(input: PreviewInput) {
  const item = input.items[0] ?? { body: "", media: [] };
  const links = findLinks(item.body);
  const visibility = input.options.visibility === "connections" ? "Connections only" : "Anyone";
  const post = html`${authorLine({ author: input.author, at: whenText(input.at), extra: visibility })}
${postText(item.body, ordered(links, findTags(item.body)), LINKEDIN_FOLD)}
${mediaGrid(item.media, { kind: "grid", altBadge: false })}`;
  return previewSection({
    network: "LinkedIn",
    slug: "linkedin",
    posts: [post],
    notes: [
      links.length > 0
        ? note("LinkedIn links the address but draws no card for it: Herald sends no article.")
        : null,
      input.options.allow_resharing === false ? note("Resharing is turned off.") : null,
      extraItems(input, "LinkedIn"),
    ],
  });
}
