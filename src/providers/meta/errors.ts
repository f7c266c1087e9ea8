// Meta's error tables as one table: (code, subcode) → what Herald does. Read by the Graph client
// (graph.ts) for Facebook, Instagram and Threads alike. The rows come from Meta's own pages: the Graph
// API's "Handling Errors" (codes 1, 2, 4, 10, 17, 32, 102, 190, 200–299, 341, 368, 506, 613, 1609005),
// its rate-limiting page (80000–80014) and the Instagram Platform's "Error Codes" (the 2207xxx
// subcodes, which Threads answers too). A subcode row wins over its code's row, so code 4 is
// throttling except with subcode 2207051 (suspected spam), which is not.

/** What a person can do about a permanent refusal (the post's `last_error.user_action`). */
export type MetaUserAction =
  /** The content was refused: change the post. */
  | "edit_post"
  /** Meta restricts the account itself (suspected spam, checkpoint): act in Meta's app, then retry. */
  | "check_account";

/** What Herald does with a Graph error. */
export type MetaErrorClass =
  /** The object is not ready yet (Meta: "please wait"): wait, then make the same call again. */
  | { kind: "wait" }
  /** Refused before anything was done: retry at Meta's estimate, else after `fallbackMs`. */
  | { kind: "throttled"; fallbackMs: number }
  /** The token or a permission is gone: only a new authorization helps. */
  | { kind: "auth" }
  /** Meta's own failure: retried on calls that create nothing; on a create call the outcome is unknown. */
  | { kind: "server" }
  /** Refused for good: no automatic retry; the person does `userAction`. */
  | { kind: "permanent"; userAction: MetaUserAction };

/** One row of the table. */
export interface MetaErrorRow {
  /** The error's `code`, or an inclusive range of codes. */
  code: number | readonly [number, number];
  /** Its `error_subcode`; null: any subcode (the code's row). */
  subcode: number | null;
  /** What Meta calls it. */
  name: string;
  class: MetaErrorClass;
  /** Added to Meta's message: what it means for the post. */
  hint?: string;
}

/**
 * When Meta throttles without saying for how long (no BUC estimate, no Retry-After): the window
 * is rolling, so Herald tries again after this long rather than hammering a throttled app.
 */
export const META_THROTTLE_FALLBACK_MS = 10 * 60_000;

/** When a publishing-limit refusal says nothing of its reset: the 24 h window frees one slot at a time. */
export const META_PUBLISHING_LIMIT_FALLBACK_MS = 60 * 60_000;

const WAIT: MetaErrorClass = { kind: "wait" };
const THROTTLED: MetaErrorClass = { kind: "throttled", fallbackMs: META_THROTTLE_FALLBACK_MS };
const AUTH: MetaErrorClass = { kind: "auth" };
const SERVER: MetaErrorClass = { kind: "server" };
const EDIT_POST: MetaErrorClass = { kind: "permanent", userAction: "edit_post" };
const CHECK_ACCOUNT: MetaErrorClass = { kind: "permanent", userAction: "check_account" };

/** Meta's error codes and subcodes Herald knows, and what it does with each. */
export const META_ERROR_TABLE: readonly MetaErrorRow[] = [
  // Graph API, "Handling Errors".
  { code: 1, subcode: null, name: "API Unknown", class: SERVER },
  { code: 2, subcode: null, name: "API Service", class: SERVER },
  { code: 4, subcode: null, name: "API Too Many Calls (application)", class: THROTTLED },
  { code: 17, subcode: null, name: "API User Too Many Calls", class: THROTTLED },
  { code: 32, subcode: null, name: "Page request limit reached", class: THROTTLED },
  { code: 613, subcode: null, name: "Custom rate limit reached", class: THROTTLED },
  { code: 341, subcode: null, name: "Application limit reached", class: THROTTLED },
  { code: [80000, 80009], subcode: null, name: "Business use case rate limit", class: THROTTLED },
  { code: 80014, subcode: null, name: "Business use case rate limit", class: THROTTLED },
  { code: 10, subcode: null, name: "API Permission Denied", class: AUTH },
  { code: [200, 299], subcode: null, name: "API Permission", class: AUTH },
  { code: 102, subcode: null, name: "API Session", class: AUTH },
  { code: 190, subcode: null, name: "Access token has expired or is invalid", class: AUTH },
  { code: 368, subcode: null, name: "Temporarily blocked for policies violations", class: EDIT_POST },
  { code: 506, subcode: null, name: "Duplicate Post", class: EDIT_POST },
  { code: 1609005, subcode: null, name: "Error Posting Link", class: EDIT_POST },
  // Instagram Platform, "Error Codes" (Threads answers the same subcodes).
  { code: -2, subcode: 2207003, name: "Media download timed out", class: SERVER },
  { code: -2, subcode: 2207020, name: "Media expired", class: SERVER },
  { code: -1, subcode: 2207001, name: "Instagram server error", class: SERVER },
  { code: -1, subcode: 2207032, name: "Create media failed", class: SERVER },
  { code: -1, subcode: 2207053, name: "Unknown upload error", class: SERVER },
  { code: 1, subcode: 2207057, name: "Thumbnail offset out of bounds", class: EDIT_POST },
  {
    code: 4,
    subcode: 2207051,
    name: "Publishing action suspected to be spam",
    class: CHECK_ACCOUNT,
    hint:
      "Meta suspects spam and restricts this account's publishing; Herald does not retry it " +
      "automatically. If Meta is mistaken, tell Meta in its app, then retry the post.",
  },
  {
    code: 9,
    subcode: 2207042,
    name: "Daily publishing limit reached",
    class: { kind: "throttled", fallbackMs: META_PUBLISHING_LIMIT_FALLBACK_MS },
  },
  {
    code: 25,
    subcode: 2207050,
    name: "Account inactive, checkpointed or restricted",
    class: CHECK_ACCOUNT,
    hint: "Sign in to the app and complete what it asks to re-enable the account, then retry the post.",
  },
  { code: 100, subcode: 2207023, name: "Unknown media type", class: EDIT_POST },
  { code: 100, subcode: 2207028, name: "Carousel validation failed", class: EDIT_POST },
  { code: 352, subcode: 2207026, name: "Unsupported video format", class: EDIT_POST },
  { code: 9004, subcode: 2207052, name: "Media could not be fetched from the URI", class: EDIT_POST },
  { code: 9007, subcode: 2207027, name: "Media not ready for publishing", class: WAIT },
  { code: 36000, subcode: 2207004, name: "Image too large", class: EDIT_POST },
  { code: 36001, subcode: 2207005, name: "Unsupported image format", class: EDIT_POST },
  { code: 36003, subcode: 2207009, name: "Unsupported aspect ratio", class: EDIT_POST },
];

/** What an error in no row is: Meta's `is_transient` → server; anything else → a refused post. */
function fallbackClass(isTransient: boolean): MetaErrorClass {
  return isTransient ? SERVER : EDIT_POST;
}

function codeMatches(row: MetaErrorRow, code: number): boolean {
  return typeof row.code === "number" ? row.code === code : code >= row.code[0] && code <= row.code[1];
}

/** The row of (code, subcode): the exact pair first, then the code's own row; null when none. */
export function metaErrorRow(code: number | null, subcode: number | null): MetaErrorRow | null {
  if (code === null) return null;
  const rows = META_ERROR_TABLE.filter((row) => codeMatches(row, code));
  return (
    (subcode !== null ? rows.find((row) => row.subcode === subcode) : undefined) ??
    rows.find((row) => row.subcode === null) ??
    null
  );
}

/** What Herald does with Meta's (code, subcode): the table's row, else by Meta's `is_transient`. */
export function classifyMetaError(input: {
  code: number | null;
  subcode: number | null;
  isTransient?: boolean;
}): MetaErrorClass {
  return metaErrorRow(input.code, input.subcode)?.class ?? fallbackClass(input.isTransient === true);
}

/** Whether a failure's recorded (code, subcode) is Meta's "not ready, please wait" (9007/2207027). */
export function isMetaWait(error: { errorCode: string | null; subcode: string | null }): boolean {
  const number = (value: string | null) => (value !== null && /^-?\d+$/.test(value) ? Number(value) : null);
  const code = number(error.errorCode);
  return code !== null && metaErrorRow(code, number(error.subcode))?.class.kind === "wait";
}
