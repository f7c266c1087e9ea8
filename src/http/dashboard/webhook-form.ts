import { CONTRACT_EVENT_TYPES, WEBHOOK_EVENT_TYPES } from "../../modules/webhooks/present.ts";
import { html, type Markup } from "../pages/html.ts";
import type { FieldErrors } from "./api.ts";
import { networkName } from "./destination-connect.ts";
import { choices, fieldId, input } from "./ui.ts";

/** What the endpoint form holds (as typed, so a form that comes back keeps it). */
export interface WebhookFormValues {
  name: string;
  url: string;
  eventTypes: string[];
  filterMode: string;
  destinationIds: string[];
  contentMode: string;
}

export const EMPTY_WEBHOOK_FORM: WebhookFormValues = {
  name: "",
  url: "",
  // The approval events are opt-in: a new endpoint starts without them.
  eventTypes: [...CONTRACT_EVENT_TYPES],
  filterMode: "all",
  destinationIds: [],
  contentMode: "metadata",
};

/** What each event type means (the contract's table). */
export const EVENT_TYPE_MEANINGS: Record<string, string> = {
  "post.published": "a post reached the published state",
  "post.failed": "a post failed",
  "post.awaiting-provider": "a post is waiting for the social network",
  "post.needs-attention": "a post needs attention",
  "post.approval-requested": "a post waits for approval (opt-in)",
  "post.approved": "a post awaiting approval was approved (opt-in)",
  "post.changes-requested": "changes were requested on a post awaiting approval (opt-in)",
  "webhook.test": "a test event sent from this page",
};

/** The error summary's names of the form's fields. */
export const WEBHOOK_FIELD_LABELS: Record<string, string> = {
  "/name": "Name",
  "/url": "URL",
  "/event_types": "Events",
  "/destination_filter_mode": "Destinations",
  "/destination_ids": "Selected destinations",
  "/content_mode": "Content",
};

/** The form's values from a posted form. */
export function webhookFormValues(form: URLSearchParams): WebhookFormValues {
  return {
    name: form.get("name")?.trim() ?? "",
    url: form.get("url")?.trim() ?? "",
    eventTypes: form.getAll("event_types"),
    filterMode: form.get("destination_filter_mode") ?? "all",
    destinationIds: form.getAll("destination_ids"),
    contentMode: form.get("content_mode") ?? "metadata",
  };
}

/** The form's values of an endpoint as the API shows it. */
export function endpointFormValues(endpoint: {
  name: string;
  url: string;
  event_types: string[];
  destination_filter_mode: string;
  destination_ids: string[];
  content_mode: string;
}): WebhookFormValues {
  return {
    name: endpoint.name,
    url: endpoint.url,
    eventTypes: endpoint.event_types,
    filterMode: endpoint.destination_filter_mode,
    destinationIds: endpoint.destination_ids,
    contentMode: endpoint.content_mode,
  };
}

/** The API body of the form (create and patch take the same fields); the API judges every value. */
export function webhookBody(values: WebhookFormValues): Record<string, unknown> {
  return {
    name: values.name,
    url: values.url,
    event_types: values.eventTypes,
    destination_filter_mode: values.filterMode,
    destination_ids: values.filterMode === "selected" ? values.destinationIds : [],
    content_mode: values.contentMode,
  };
}

/** The endpoint's fields: name, URL, events, which destinations, how much of the post. */
export function webhookFields(
  values: WebhookFormValues,
  errors: FieldErrors,
  destinations: { id: string; channel: string; display_name: string }[],
): Markup {
  return html`${input({
    name: "name",
    pointer: "/name",
    label: "Name",
    hint: "For you: what receives these events.",
    value: values.name,
    maxlength: 120,
    errors,
    required: true,
  })}${input({
    name: "url",
    pointer: "/url",
    label: "URL",
    hint: "A public https:// address (port 443). Herald signs every delivery with the endpoint's secret.",
    type: "url",
    value: values.url,
    maxlength: 2048,
    errors,
    required: true,
  })}${choices({
    name: "event_types",
    pointer: "/event_types",
    legend: "Events",
    type: "checkbox",
    options: WEBHOOK_EVENT_TYPES.map((t) => ({ value: t, label: t, hint: EVENT_TYPE_MEANINGS[t] })),
    checked: values.eventTypes,
    errors,
  })}${choices({
    name: "destination_filter_mode",
    pointer: "/destination_filter_mode",
    legend: "Posts on",
    type: "radio",
    options: [
      { value: "all", label: "Every destination" },
      { value: "selected", label: "Only the destinations selected below" },
    ],
    checked: [values.filterMode],
    errors,
  })}${
    destinations.length
      ? choices({
          name: "destination_ids",
          pointer: "/destination_ids",
          legend: "Selected destinations",
          type: "checkbox",
          options: destinations.map((d) => ({
            value: d.id,
            label: `${networkName(d.channel)}: ${d.display_name}`,
          })),
          checked: values.destinationIds,
          errors,
        })
      : html`<p class="hint" id="${fieldId("/destination_ids")}">No destination is connected yet.</p>${
          errors.has("/destination_ids") ? html`<p class="error">${errors.get("/destination_ids")}</p>` : ""
        }`
  }${choices({
    name: "content_mode",
    pointer: "/content_mode",
    legend: "Content",
    type: "radio",
    options: [
      { value: "metadata", label: "Metadata", hint: "the post's id, state, network and links" },
      { value: "full", label: "Full", hint: "also the post's headline and body" },
    ],
    checked: [values.contentMode],
    errors,
  })}`;
}
