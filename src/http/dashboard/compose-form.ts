import { html, type Markup } from "../pages/html.ts";
import type { FieldErrors } from "./api.ts";
import type { NetworkOptions, OptionField } from "./compose-networks.ts";
import { optionName, sharedAltName, type ComposeDestination, type ComposeState } from "./compose-read.ts";
import { choices, errorSummary, fieldId, input, postForm, select, textarea } from "./ui.ts";

/** A ready asset of the workspace's library. */
export interface LibraryAsset {
  id: string;
  label: string;
  type: string;
  contentType: string;
  dimensions: string | null;
}

/** What the compose page shows besides the state. */
export interface ComposeView {
  state: ComposeState;
  destinations: ComposeDestination[];
  library: LibraryAsset[];
  timeZone: string;
  workspaceId: string;
  csrf: string;
  errors: FieldErrors;
  /** Problems with no field of their own (and the API's detail when nothing else says it). */
  problems: string[];
  /** An outcome to announce (an upload, a check without problems). */
  status: string | null;
  /** Whether the script may send parts straight to the API's part URLs (Herald stores the files). */
  directParts: boolean;
  /** The preview and checks pane (compose-pane.ts), and each item's counter beside its text. */
  pane: Markup;
  counters: { text: string; over: boolean }[];
  /** "Next queue slot: Tue 3 Dec 09:00 Europe/Paris" for the chosen destinations, or why there is none. */
  nextSlot: string;
  /** The workspace's local time now ("Sun 1 Mar 13:00"), beside the time picker. */
  nowInZone: string;
  /** Whether the workspace tracks links (then a post may opt out). */
  tracksLinks: boolean;
}

/** What the file inputs offer (the API's asset media types). */
const MEDIA_TYPES = "image/png,image/jpeg,image/gif,image/webp,video/mp4,video/quicktime";

const itemName = (n: number) => (n === 0 ? "Item 1 (the post)" : `Item ${n + 1} (reply)`);

/** The networks of the chosen destinations (those with options), each once. */
function chosenNetworks(view: Pick<ComposeView, "state" | "destinations">): NetworkOptions[] {
  const chosen = view.destinations.filter((d) => view.state.destinationIds.includes(d.id) && d.network);
  return [...new Map(chosen.map((d) => [d.channel, d.network!])).values()];
}

/** The networks of every destination (those with options), each once: the page carries them all. */
function allNetworks(view: Pick<ComposeView, "destinations">): NetworkOptions[] {
  const withOptions = view.destinations.filter((d) => d.network);
  return [...new Map(withOptions.map((d) => [d.channel, d.network!])).values()];
}

const attachedIds = (state: ComposeState) => [...new Set(state.items.flatMap((i) => i.media))];

/** Whether an asset is an image (those take alt text). */
const isImage = (id: string, library: LibraryAsset[]) =>
  library.find((a) => a.id === id)?.contentType.startsWith("image/") ?? false;

function assetText(id: string, library: LibraryAsset[]): string {
  const a = library.find((x) => x.id === id);
  return a ? `${a.label} (${a.contentType}${a.dimensions ? `, ${a.dimensions}` : ""})` : id;
}

/**
 * Every field of the form by its pointer, with the label the error summary gives it (the API's errors
 * are mapped onto these; see compose-read.ts).
 */
export function formFields(
  view: Pick<ComposeView, "state" | "destinations" | "library">,
): Map<string, string> {
  const fields = new Map<string, string>([["/destination_ids", "Destinations"]]);
  view.state.items.forEach((_, n) => {
    fields.set(`/body/${n}/text`, `Item ${n + 1} text`);
    fields.set(`/body/${n}/media`, `Item ${n + 1} media`);
    fields.set(`/body/${n}/file`, `Item ${n + 1} upload`);
  });
  for (const network of chosenNetworks(view)) {
    fields.set(`/options/${network.channel}`, `${network.name} options`);
    for (const f of network.fields)
      fields.set(`/options/${network.channel}/${f.key}`, `${network.name}: ${f.label}`);
  }
  for (const id of attachedIds(view.state))
    if (isImage(id, view.library)) fields.set(`/alt/${id}`, `Alt text for ${assetText(id, view.library)}`);

  fields.set("/recycle", "Recycling");
  fields.set("/recycle/every_days", "Recycling: every (days)");
  fields.set("/recycle/count", "Recycling: copies");
  fields.set("/recycle/variations", "Recycling: variations");
  fields.set("/when", "When");
  fields.set("/at", "Date and time");
  return fields;
}

function optionField(view: ComposeView, network: NetworkOptions, field: OptionField): Markup {
  const name = optionName(network.channel, field.key);
  const pointer = `/options/${network.channel}/${field.key}`;
  const values = view.state.options.get(name) ?? [];
  const common = { name, pointer, label: field.label, errors: view.errors };
  if (field.kind === "select" || field.kind === "yesno") {
    const options: [string, string][] =
      field.kind === "yesno"
        ? [
            ["", "Not set"],
            ["yes", "Yes"],
            ["no", "No"],
          ]
        : [["", "Not set"], ...field.choices.map(([v, l]) => [v!, l!] as [string, string])];
    return select({ ...common, hint: field.hint, options, value: values[0] ?? "" });
  }
  if (field.kind === "flags")
    return choices({
      name,
      pointer,
      legend: field.label,
      type: "checkbox",
      options: field.choices.map((c) => ({ value: c, label: c })),
      checked: values,
      errors: view.errors,
    });
  if (field.kind === "flag") {
    const id = fieldId(pointer);
    return html`<div class="choice"><input id="${id}" type="checkbox" name="${name}" value="1"${
      values.length ? html` checked` : ""
    }> <label for="${id}">${field.label}</label></div>`;
  }
  return input({
    ...common,
    hint: field.hint,
    value: values[0] ?? "",
    extra: field.integer ? html` inputmode="numeric"` : undefined,
  });
}

/**
 * A network's options: on the page for every network of the workspace's destinations, shown while one
 * of its destinations is chosen (the script follows the checkboxes; without it, the next round trip).
 */
function networkFieldset(view: ComposeView, network: NetworkOptions, chosen: boolean): Markup {
  const pointer = `/options/${network.channel}`;
  const error = view.errors.get(pointer);
  if (network.fields.length === 0 && !error) return html``;
  const ids = view.destinations.filter((d) => d.channel === network.channel).map((d) => d.id);
  return html`<fieldset id="${fieldId(pointer)}" class="network-options" data-destinations="${ids.join(" ")}"${
    chosen ? "" : html` hidden`
  }><legend>${network.name}</legend>
${network.hint ? html`<p class="hint">${network.hint}</p>` : ""}
${error ? html`<p class="error" id="${fieldId(pointer)}-error">${error}</p>` : ""}
${network.fields.map((f) => optionField(view, network, f))}
</fieldset>`;
}

/** The networks that take alt text among the chosen destinations ("Bluesky and X"). */
function altNetworks(view: ComposeView): string {
  const names = chosenNetworks(view)
    .filter((n) => n.altText)
    .map((n) => n.name);
  if (names.length === 0) return "Sent to every chosen network that takes alt text.";
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
  return `Sent to ${list}; describe the image for people who cannot see it.`;
}

/** One attached asset: its thumbnail, name, alt text (images), and buttons to move it earlier or detach it. */
function attachedMedia(view: ComposeView, n: number, id: string, position: number): Markup {
  const name = assetText(id, view.library);
  const image = isImage(id, view.library);
  const thumb = image
    ? html`<img class="thumb" src="/dashboard/workspaces/${view.workspaceId}/assets/${id}/thumbnail" alt="" loading="lazy">`
    : html`<span class="thumb video" aria-hidden="true">▶</span>`;
  const alt = image
    ? textarea({
        name: sharedAltName(id),
        pointer: `/alt/${id}`,
        label: `Alt text for ${name}`,
        hint: altNetworks(view),
        rows: 2,
        value: view.state.alt.get(id) ?? "",
        errors: view.errors,
      })
    : "";
  return html`<li class="media-card" data-asset="${id}"><input type="hidden" name="item_${n}_media" value="${id}">
${thumb}<span class="media-name">${name}</span>
${alt}
<span class="media-actions">${
    position > 0
      ? html`<button type="submit" name="op" value="move:${n}:${id}" class="secondary" data-move>Move earlier<span
class="visually-hidden"> ${name}</span></button> `
      : ""
  }<button type="submit" name="op" value="detach:${n}:${id}" class="secondary" data-detach>Detach<span
class="visually-hidden"> ${name}</span></button></span></li>`;
}

function itemFieldset(view: ComposeView, n: number): Markup {
  const item = view.state.items[n]!;
  const label = (id: string) => assetText(id, view.library);
  const free = view.library.filter((a) => !item.media.includes(a.id));
  const filePointer = `/body/${n}/file`;
  const fileId = fieldId(filePointer);
  const counter = view.counters[n];
  const attachedId = fieldId(`/body/${n}/attached`);
  return html`<fieldset class="compose-item" data-item="${n}"><legend>${itemName(n)}</legend>
${textarea({
  name: `item_${n}_text`,
  pointer: `/body/${n}/text`,
  label: "Text",
  rows: n === 0 ? 6 : 4,
  value: item.text,
  errors: view.errors,
})}
<p class="counter${counter?.over ? " over" : ""}" id="${fieldId(`/body/${n}/text`)}-count" data-counter="${n}">${
    counter?.text ?? ""
  }</p>
<p class="media-title" id="${attachedId}-title">Media</p>
<ul class="attached" id="${attachedId}" aria-labelledby="${attachedId}-title">${item.media.map(
    (id, position) => attachedMedia(view, n, id, position),
  )}</ul>
<p class="dropzone" data-drop="${n}" hidden>Drop images or videos here, or paste them into the text.</p>
${select({
  name: `item_${n}_add`,
  pointer: `/body/${n}/media`,
  label: "Attach from the library",
  hint: free.length ? undefined : "No other ready media in this workspace yet.",
  options: [["", "Choose an asset"], ...free.map((a): [string, string] => [a.id, label(a.id)])],
  errors: view.errors,
})}
<button type="submit" name="op" value="attach" class="secondary">Attach<span
class="visually-hidden"> to item ${n + 1}</span></button>
${input({
  name: `item_${n}_file`,
  pointer: filePointer,
  label: "Upload a new file",
  type: "file",
  hint: "PNG, JPEG, GIF, WebP, MP4 or MOV.",
  errors: view.errors,
  extra: html` accept="${MEDIA_TYPES}" data-upload-item="${n}" multiple`,
})}
<ul class="uploads" id="${fileId}-uploads" aria-label="Uploads, item ${n + 1}"></ul>
<p class="hint" id="${fileId}-status" role="status"></p>
<button type="submit" name="op" value="upload" class="secondary">Upload<span
class="visually-hidden"> to item ${n + 1}</span></button>
${
  view.state.items.length > 1
    ? html`<button type="submit" name="op" value="remove:${n}" class="secondary">Remove
${itemName(n).toLowerCase()}</button>`
    : ""
}
</fieldset>`;
}

/** The workspace tracks links: this post may publish its URLs as written instead. */
function linkTrackingChoice(view: ComposeView): Markup {
  return choices({
    name: "link_tracking",
    pointer: "/link_tracking",
    legend: "Tracked links",
    type: "checkbox",
    options: [
      {
        value: "off",
        label: "Publish this post's links as written (no short links, no click counts)",
        hint: "The workspace publishes URLs as short links that count clicks.",
      },
    ],
    checked: view.state.untracked ? ["off"] : [],
    errors: view.errors,
  });
}

/** Copies of an evergreen post after it is published (left empty: none). */
function recycleFieldset(view: ComposeView): Markup {
  const { recycle } = view.state;
  const error = view.errors.get("/recycle");
  const id = fieldId("/recycle");
  return html`<fieldset id="${id}"><legend>Recycling (optional)</legend>
<p class="hint">Publish copies of this post again later. Not on X, TikTok or YouTube, which flag repeats.</p>
${error ? html`<p class="error" id="${id}-error">${error}</p>` : ""}
${input({
  name: "recycle_count",
  pointer: "/recycle/count",
  label: "Copies",
  hint: "1 to 52; leave empty for none.",
  value: recycle.count,
  errors: view.errors,
  extra: html` inputmode="numeric"`,
})}
${input({
  name: "recycle_every",
  pointer: "/recycle/every_days",
  label: "Every (days)",
  hint: "1 to 365 days after the publication before.",
  value: recycle.every,
  errors: view.errors,
  extra: html` inputmode="numeric"`,
})}
${textarea({
  name: "recycle_variations",
  pointer: "/recycle/variations",
  label: "Variations",
  hint: "Texts the copies take in turn, separated by a line ---; empty: the copies repeat the post.",
  rows: 4,
  value: recycle.variations,
  errors: view.errors,
})}
</fieldset>`;
}

/** The compose page's content: problems first, then the one form that holds everything. */
export function composeContent(view: ComposeView): Markup {
  const { state } = view;
  const base = `/dashboard/workspaces/${view.workspaceId}`;
  const labels = Object.fromEntries(formFields(view));
  const chosen = new Set(chosenNetworks(view).map((n) => n.channel));
  const networks = allNetworks(view).map((n) => networkFieldset(view, n, chosen.has(n.channel)));
  const destinationChoices = view.destinations.length
    ? html`${choices({
        name: "destination_ids",
        pointer: "/destination_ids",
        legend: "Destinations",
        type: "checkbox",
        options: view.destinations.map((d) => ({
          value: d.id,
          label: d.name,
          hint: d.status === "ready" ? d.channel : `${d.channel}, ${d.status}`,
        })),
        checked: state.destinationIds,
        errors: view.errors,
      })}
<p data-without-script><button type="submit" name="op" value="refresh" class="secondary">Show options for
the chosen destinations</button></p>`
    : html`<p class="notice warn" id="${fieldId("/destination_ids")}">No destinations yet.
<a href="${base}/destinations">Connect one</a> to post.</p>`;
  const form = postForm(
    {
      action: `${base}/posts/new`,
      csrf: view.csrf,
      className: "compose",
      multipart: true,
      label: "Compose a post",
    },
    // Enter in a text field submits with the first button: make that "check", which stores nothing.
    html`<button type="submit" name="op" value="check" class="visually-hidden" tabindex="-1"
aria-hidden="true">Check</button>
<input type="hidden" name="group" value="${state.group}">
<input type="hidden" name="item_count" value="${state.items.length}">
<span hidden data-upload-start="${base}/uploads" data-upload-file="${base}/uploads/file"
data-direct="${view.directParts ? "1" : "0"}"></span>
<h2>Where</h2>
${destinationChoices}
<h2>What</h2>
${state.items.map((_, n) => itemFieldset(view, n))}
<p><button type="submit" name="op" value="add" class="secondary">Add another item</button></p>
${networks.some((m) => m.text) ? html`<h2>Network options</h2>${networks}` : ""}
${recycleFieldset(view)}
${view.tracksLinks ? linkTrackingChoice(view) : ""}
<h2>When</h2>
${choices({
  name: "when",
  pointer: "/when",
  legend: "Send it",
  type: "radio",
  options: [
    { value: "draft", label: "Save as a draft" },
    { value: "now", label: "Publish now" },
    { value: "at", label: "Schedule at a time" },
    { value: "queue", label: "Add to the queue", hint: view.nextSlot },
  ],
  checked: [state.when],
  errors: view.errors,
})}
${input({
  name: "at",
  pointer: "/at",
  type: "datetime-local",
  label: `Date and time (${view.timeZone})`,
  hint:
    `For “Schedule at a time”: the time in ${view.timeZone}, the workspace's time zone ` +
    `(it is ${view.nowInZone} there now).`,
  value: state.at,
  errors: view.errors,
})}
<p class="actions"><button type="submit" name="op" value="create">Save or send</button>
<button type="submit" name="op" value="check" class="secondary">Check for problems</button></p>`,
  );
  return html`<h1>Compose</h1>
<div class="notice ok" role="status" id="compose-notice"${view.status ? "" : html` hidden`}><p>${view.status ?? ""}</p></div>
${errorSummary(view.errors, view.problems.length ? view.problems.join(" ") : null, labels)}
<div class="compose-layout">${form}
<section class="compose-pane" id="compose-pane" aria-labelledby="compose-pane-title" tabindex="0"
data-refresh="${base}/posts/new/preview">${view.pane}</section></div>`;
}
