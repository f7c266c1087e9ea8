import type { ChatOutboxEvent } from "./repo.ts";

/** Slack's mrkdwn treats these three specially; everything shown from Herald's data is escaped. */
export function slackEscape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** A link Slack renders (`<url|label>`); the label is escaped, the URL is Herald's own. */
function link(url: string, label: string): string {
  return `<${url.replace(/[<>|]/g, "")}|${slackEscape(label)}>`;
}

/**
 * The message posted for an outbox event: what happened, where, and a link to the dashboard page
 * where it is dealt with. Null for event types chat notifications do not post.
 */
export function chatMessageFor(
  event: ChatOutboxEvent,
  workspaceName: string,
  baseUrl: string,
): string | null {
  const p = event.payload;
  const ws = `*${slackEscape(workspaceName)}*`;
  const dashboard = `${baseUrl}/dashboard/workspaces/${event.workspaceId}`;
  switch (event.type) {
    case "post.failed":
    case "post.needs-attention": {
      const error = (p.error ?? null) as { message?: unknown } | null;
      const why =
        error && typeof error.message === "string" ? `: ${slackEscape(error.message.slice(0, 300))}` : "";
      const what =
        event.type === "post.failed"
          ? `A ${slackEscape(str(p.channel))} post failed in ${ws}`
          : p.state === "missed"
            ? `A ${slackEscape(str(p.channel))} post missed its time in ${ws}`
            : `A ${slackEscape(str(p.channel))} post needs attention in ${ws}`;
      return `${what}${why}. ${link(`${dashboard}/posts/${str(p.id)}`, "Open the post")}`;
    }
    case "destination.reauthorization_required": {
      const name = str(p.display_name) || str(p.handle) || str(p.id);
      return (
        `The ${slackEscape(str(p.channel))} destination ${slackEscape(name)} in ${ws} must be connected ` +
        `again before it can publish. ${link(`${dashboard}/destinations`, "Reconnect it")}`
      );
    }
    case "post.approval-requested":
    case "post.approved":
    case "post.changes-requested": {
      const by = slackEscape(str((p.by as { name?: unknown } | null)?.name) || "someone");
      const post = `a ${slackEscape(str(p.channel))} post in ${ws}`;
      const open = link(`${dashboard}/posts/${str(p.id)}`, "Open the post");
      if (event.type === "post.approval-requested")
        return `${by} asks for approval of ${post}. ${link(`${dashboard}/approvals`, "Review it")}`;
      if (event.type === "post.approved") return `${by} approved ${post}. ${open}`;
      const comment = typeof p.comment === "string" ? `: ${slackEscape(p.comment.slice(0, 300))}` : "";
      return `${by} requested changes to ${post}${comment}. ${open}`;
    }
    case "webhook_endpoint.disabled":
      return (
        `The webhook endpoint ${slackEscape(str(p.name) || str(p.id))} in ${ws} was disabled after ` +
        `failing deliveries for three days. ` +
        link(`${dashboard}/webhooks/${str(p.id)}`, "Open the endpoint")
      );
    default:
      return null;
  }
}
