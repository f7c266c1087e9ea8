// A workspace's link tracking: what the workspace resource shows and how PATCH merges the fields sent.
import type { FieldError } from "../../core/problem.ts";
import { ProblemError } from "../../core/problem.ts";
import type { WorkspaceRow } from "../workspaces/repo.ts";

/** A workspace's link tracking as stored: on or off, and the UTM parameters its links add. */
export type LinkTrackingSettings = NonNullable<WorkspaceRow["linkTracking"]>;

/** The settings of a workspace that never set them: tracking off, no UTM presets. */
export const LINK_TRACKING_OFF: LinkTrackingSettings = {
  enabled: false,
  utm_source: null,
  utm_medium: null,
  utm_campaign: null,
};

const UTM_FIELDS = ["utm_source", "utm_medium", "utm_campaign"] as const;

/** What PATCH may send: any of the four fields (a UTM value of null removes that preset). */
export type LinkTrackingPatch = Partial<LinkTrackingSettings>;

/** The stored settings, or those of a workspace that never set them. */
export function linkTrackingOf(stored: LinkTrackingSettings | null): LinkTrackingSettings {
  return stored ?? LINK_TRACKING_OFF;
}

/**
 * The settings after a PATCH: the fields sent replace the stored ones, the others stay. UTM values
 * are trimmed; one that is empty after trimming or holds a control character is refused (400 with
 * its pointer).
 */
export function mergeLinkTracking(
  stored: LinkTrackingSettings | null,
  patch: LinkTrackingPatch,
): LinkTrackingSettings {
  const merged = { ...linkTrackingOf(stored) };
  const errors: FieldError[] = [];
  if (patch.enabled !== undefined) merged.enabled = patch.enabled;
  for (const field of UTM_FIELDS) {
    const value = patch[field];
    if (value === undefined) continue;
    if (value === null) {
      merged[field] = null;
      continue;
    }
    const trimmed = value.trim();
    const pointer = `/link_tracking/${field}`;
    if (trimmed === "")
      errors.push({ pointer, code: "custom", detail: "must not be empty (null removes it)" });
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
    else if (/[\u0000-\u001f\u007f]/.test(trimmed))
      errors.push({ pointer, code: "custom", detail: "must not contain control characters" });
    else merged[field] = trimmed;
  }
  if (errors.length > 0)
    throw new ProblemError("public_invalid_request", "The link tracking settings are not valid.", { errors });
  return merged;
}
