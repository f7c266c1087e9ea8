import { html, type Markup } from "./html.ts";

/** An instant as people read it in `timeZone` ("28 Nov 2026, 09:30"): the one format of every page. */
function readableInstant(at: string, timeZone: string): string {
  return new Intl.DateTimeFormat("en-GB", { timeZone, dateStyle: "medium", timeStyle: "short" }).format(
    new Date(at),
  );
}

/** A timestamp as the workspace's local time, in a `<time>` element with the exact instant. */
export function localTime(at: string | null | undefined, timeZone = "UTC"): Markup | string {
  if (!at) return "—";
  return html`<time datetime="${at}">${readableInstant(at, timeZone)}</time>`;
}

/**
 * An instant as people read it, formatted like the workspace pages' times, with its zone named
 * ("28 Nov 2026, 09:30 UTC"), in a `<time>` element carrying the exact instant. Pages that belong to no
 * workspace (the overview, API keys, billing, the device approval) show UTC, labelled as such.
 */
export function zonedTime(at: string | null | undefined, timeZone = "UTC"): Markup | string {
  if (!at) return "—";
  return html`<time datetime="${at}">${readableInstant(at, timeZone)} ${timeZone}</time>`;
}
