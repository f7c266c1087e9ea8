import { html, type Markup } from "../pages/html.ts";

/**
 * Every status message a dashboard page shows after a redirect (`?notice=`), by the page the redirect
 * lands on: the one table from a notice to its text. Redirects name their notice through `withNotice`,
 * whose type accepts only a code of this table, so no redirect can carry a notice without a text.
 */
export const NOTICES = {
  post: {
    created: "The post is created.",
    cancelled: "The post was cancelled.",
    retried: "The post is being sent again.",
    rescheduled: "The post was moved to its new time.",
    published: "The post is on its way to the network.",
    scheduled: "The post is scheduled.",
    "sent-for-approval": "The post is sent for approval: it goes out once an owner or admin approves it.",
    approved: "The post is approved: it goes out as requested.",
    "changes-requested": "Changes are requested: the post stays a draft, with your comment below.",
    commented: "Your comment is added.",
    "review-link-deleted": "The review link is deleted: it no longer opens.",
  },
  approvals: {
    approved: "The group is approved: its posts go out as requested.",
    "changes-requested": "Changes are requested: the posts stay drafts, with your comment.",
  },
  posts: { deleted: "The draft was deleted." },
  calendar: { moved: "The post was moved; it is shown at its new time." },
  server: {
    open: "Saved: anyone may sign up now.",
    closed: "Saved: only people invited by someone in an account may join now.",
  },
  destinations: {
    enabled: "The destination is enabled: posts can go to it again.",
    disabled: "The destination is disabled: no post goes to it until it is enabled again.",
    default: "The destination is now the default of its network.",
    disconnected: "The destination is disconnected and its credentials are erased.",
    // Shown only when the connection itself cannot be read; otherwise its account or error is named.
    connected: "The account is connected.",
    not_connected: "The account was not connected. Connect it again below.",
  },
  "workspace-settings": {
    created: "The workspace is created. Set its posting times below, then connect destinations.",
    saved: "The workspace's settings are saved.",
    "queue-saved": "The posting times are saved.",
    "approval-saved": "Saved: the approval setting of the workspace.",
    "links-saved": "Link tracking is saved.",
  },
  keys: {
    revoked: "The key is revoked: the API refuses it from now on.",
    "already-revoked": "That key was already revoked; nothing changed.",
  },
  team: {
    invited: "The invitation is stored and its e-mail is on its way.",
    resent: "A new invitation e-mail is on its way; the earlier link no longer works.",
    // A form sent twice while no mail goes out: the link was on the first answer only.
    "invited-link-shown":
      "The invitation is stored; its link was shown once, when it was created. Resend it for a new link.",
    "resent-link-shown": "A new link was made and shown once; resend again for another.",
    revoked: "The invitation is revoked; its link no longer works.",
    removed: "The person is removed: their sessions ended and the keys they held are revoked.",
  },
  billing: { converted: "The trial has ended: the subscription is active from now on." },
  webhooks: { deleted: "The endpoint is deleted, with its delivery log." },
  "webhook-endpoint": {
    saved: "The endpoint's settings are saved.",
    enabled: "The endpoint is enabled: new events are sent to it again.",
    disabled: "The endpoint is disabled: no event is sent to it, and pending deliveries are ended.",
    test_sent: "A test event is on its way; it appears in the delivery log below.",
    redelivered: "The event is sent again, as a new delivery in the log below.",
  },
  "analytics-group": { refreshing: "The networks are asked for fresh numbers; reload in a minute." },
} as const satisfies Record<string, Record<string, string>>;

export type NoticePage = keyof typeof NOTICES;
export type NoticeOf<P extends NoticePage> = keyof (typeof NOTICES)[P] & string;

/** `path` with the notice its page shows (`extra` adds query parameters the page reads with it). */
export function withNotice<P extends NoticePage>(
  path: string,
  _page: P,
  code: NoticeOf<P>,
  extra: Record<string, string> = {},
): string {
  const query = new URLSearchParams({ notice: code, ...extra });
  return `${path}${path.includes("?") ? "&" : "?"}${query.toString()}`;
}

/** The text of the notice `query` names for `page`, if the table has one. */
export function noticeText(query: URLSearchParams, page: NoticePage): string | null {
  const texts: Record<string, string> = NOTICES[page];
  const code = query.get("notice") ?? "";
  return Object.hasOwn(texts, code) ? texts[code]! : null;
}

/** The status message of the notice `query` names for `page` (nothing for an unknown one). */
export function notice(query: URLSearchParams, page: NoticePage): Markup {
  const text = noticeText(query, page);
  return text ? html`<div class="notice ok" role="status"><p>${text}</p></div>` : html``;
}
