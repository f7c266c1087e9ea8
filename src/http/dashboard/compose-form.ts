import { html, type Markup } from "../pages/html.ts";
import type { FieldErrors } from "./api.ts";
import type { NetworkOptions, OptionField } from "./compose-networks.ts";
import { altName, optionName, type ComposeDestination, type ComposeState } from "./compose-read.ts";
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
}

/** What the file inputs offer (the API's asset media types). */
const MEDIA_TYPES = "image/png,image/jpeg,image/gif,image/webp,video/mp4,video/quicktime";

const itemName = (n: number) => (n === 0 ? "Item 1 (the post)" : `Item ${n + 1} (reply)`);

/** The networks of the chosen destinations (those with options), each once. */
function chosenNetworks(view: Pick<ComposeView, "state" | "destinations">): NetworkOptions[] {
  const chosen = view.destinations.filter((d) => view.state.destinationIds.includes(d.id) && d.network);
  return [...new Map(chosen.map((d) => [d.channel, d.network!])).values()];
}

const attachedIds = (state: ComposeState) => [...new Set(state.items.flatMap((i) => i.media))];

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
    if (network.altText)
      for (const id of attachedIds(view.state))
        fields.set(
          `/options/${network.channel}/alt_text_by_asset_id/${id}`,
          `${network.name}: alt text for ${assetText(id, view.library)}`,
        );
  }
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

function networkFieldset(view: ComposeView, network: NetworkOptions): Markup {
  const pointer = `/options/${network.channel}`;
  const error = view.errors.get(pointer);
  const alt = network.altText
    ? attachedIds(view.state).map((id) =>
        textarea({
          name: altName(network.channel, id),
          pointer: `${pointer}/alt_text_by_asset_id/${id}`,
          label: `Alt text for ${assetText(id, view.library)}`,
          rows: 2,
          value: view.state.options.get(altName(network.channel, id))?.[0] ?? "",
          errors: view.errors,
        }),
      )
    : [];
  if (network.fields.length === 0 && alt.length === 0 && !error) return html``;
  return html`<fieldset id="${fieldId(pointer)}"><legend>${network.name}</legend>
${network.hint ? html`<p class="hint">${network.hint}</p>` : ""}
${error ? html`<p class="error" id="${fieldId(pointer)}-error">${error}</p>` : ""}
${network.fields.map((f) => optionField(view, network, f))}${alt}
</fieldset>`;
}

function itemFieldset(view: ComposeView, n: number): Markup {
  const item = view.state.items[n]!;
  const label = (id: string) => assetText(id, view.library);
  const free = view.library.filter((a) => !item.media.includes(a.id));
  const filePointer = `/body/${n}/file`;
  const fileId = fieldId(filePointer);
  return html`<fieldset class="compose-item" data-item="${n}"><legend>${itemName(n)}</legend>
${textarea({
  name: `item_${n}_text`,
  pointer: `/body/${n}/text`,
  label: "Text",
  rows: n === 0 ? 6 : 4,
  value: item.text,
  errors: view.errors,
})}
<p class="media-title">Media</p>
<ul class="attached" id="${fieldId(`/body/${n}/attached`)}">${item.media.map(
    (id) => html`<li><input type="hidden" name="item_${n}_media" value="${id}">${label(id)}
<button type="submit" name="op" value="detach:${n}:${id}" class="secondary">Detach<span
class="visually-hidden"> ${label(id)}</span></button></li>`,
  )}</ul>
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
  extra: html` accept="${MEDIA_TYPES}" data-upload-item="${n}"`,
})}
<progress id="${fileId}-progress" max="100" value="0" aria-label="Upload progress, item ${n + 1}"
hidden></progress>
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
  const networks = chosenNetworks(view).map((n) => networkFieldset(view, n));
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
<p><button type="submit" name="op" value="refresh" class="secondary">Show options for the chosen
destinations</button></p>`
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
    { value: "queue", label: "Add to the queue", hint: "the workspace's next free posting window" },
  ],
  checked: [state.when],
  errors: view.errors,
})}
${input({
  name: "at",
  pointer: "/at",
  type: "datetime-local",
  label: `Date and time (${view.timeZone})`,
  hint: "For “Schedule at a time”, in the workspace's time zone.",
  value: state.at,
  errors: view.errors,
})}
<p class="actions"><button type="submit" name="op" value="create">Save or send</button>
<button type="submit" name="op" value="check" class="secondary">Check for problems</button></p>`,
  );
  return html`<h1>Compose</h1>
${view.status ? html`<div class="notice ok" role="status"><p>${view.status}</p></div>` : ""}
${errorSummary(view.errors, view.problems.length ? view.problems.join(" ") : null, labels)}
${form}`;
}
