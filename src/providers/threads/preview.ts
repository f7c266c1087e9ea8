// How a Threads post Herald sends will look: username and time; links, mentions and the topic tag
// (the first #tag: Threads makes one per post) as entities; one image or video, or a carousel to swipe;
// a card for the first link of a post without media; who can reply, when limited. Thread items in order.
// Threads shows up to 500 characters whole on the web (the mobile fold is unverified), so no fold.
import type { PreviewInput } from "../../http/previews/index.ts";
import {
  authorLine,
  findLinks,
  findMentions,
  findTags,
  html,
  linkCard,
  mediaGrid,
  note,
  ordered,
  postText,
  previewSection,
  whenText,
} from "../../http/previews/kit.ts";

const REPLY_CONTROL: Record<string, string> = {
  accounts_you_follow: "Only profiles you follow can reply.",
  mentioned_only: "Only profiles mentioned can reply.",
};

export function threadsPreview(input: PreviewInput) {
  const username = input.author.handle?.replace(/^@/, "") ?? input.author.name;
  const posts = input.items.map((item) => {
    const links = findLinks(item.body);
    const topic = findTags(item.body).slice(0, 1);
    const entities = ordered(links, findMentions(item.body, { dots: true }), topic);
    const card = item.media.length === 0 && links[0] ? linkCard(links[0].href!, "Threads") : null;
    return html`${authorLine({ author: { ...input.author, name: username }, at: whenText(input.at) })}
${postText(item.body, entities, null)}${mediaGrid(item.media, { kind: "strip", altBadge: false })}${card}`;
  });
  const reply = REPLY_CONTROL[String(input.options.reply_control)];
  return previewSection({ network: "Threads", slug: "threads", posts, notes: [reply ? note(reply) : null] });
}
