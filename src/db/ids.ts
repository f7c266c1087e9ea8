import { monotonicFactory } from "ulid";

const nextUlid = monotonicFactory();

/** Prefixes of the contract, plus Herald's own internal ones. */
export type IdPrefix =
  | "acc"
  | "usr"
  | "ws"
  | "key"
  | "dest"
  | "send"
  | "ast"
  | "upl"
  | "rcpt"
  | "att"
  | "wh"
  | "evt"
  | "req"
  | "aud"
  | "mail"
  | "qw"
  | "dlv"
  | "conn"
  | "snap"
  | "arr"
  // Rows of the signup handoff; none of them appears in the API.
  | "sgn"
  | "cla"
  | "ses"
  | "emc"
  // Feedback messages and chat notifications (issue 17).
  | "fb"
  | "chn"
  // Password reset links (issue 26); never in the API.
  | "pwr"
  // OAuth grants (rows of api_keys, so audit records name them) and registered clients (issue 29).
  | "grt"
  | "hoc"
  // Comments on posts, review links and approval steps (issue 30).
  | "cmt"
  | "rvl"
  | "apv"
  // CSV imports of posts (issue 31).
  | "imp"
  // Tracked short links (issue 31).
  | "lnk";

/**
 * A new id `<prefix>_<ulid>` in lower case: time-ordered (monotonic within one process), so
 * sorting by id sorts by creation and cursors page stably.
 */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid().toLowerCase()}`;
}
