/**
 * Slack's `chat.postMessage` with plain fetch (the official client retries and sleeps by itself; the
 * outbox does that here, across restarts). Every outcome is classified once: sent, retry (optionally
 * after Slack's Retry-After), or refused for good.
 */

/** What one call came to. */
export type SlackOutcome =
  | { kind: "sent"; ts: string | null }
  | { kind: "retry"; error: string; retryAfterSeconds: number | null }
  | { kind: "permanent"; error: string };

/**
 * `ok: false` errors that will not go away by sending again: the channel, the bot's membership, the
 * token or the message itself must be fixed first. Unknown errors count as permanent too (a loop of
 * identical refusals helps nobody); the transient ones are listed in RETRYABLE_ERRORS.
 */
export const PERMANENT_ERRORS = [
  "channel_not_found",
  "not_in_channel",
  "is_archived",
  "invalid_auth",
  "not_authed",
  "account_inactive",
  "token_revoked",
  "token_expired",
  "no_permission",
  "missing_scope",
  "restricted_action",
  "msg_too_long",
  "no_text",
  "invalid_arguments",
] as const;

/** `ok: false` errors Slack documents as temporary. */
export const RETRYABLE_ERRORS = [
  "ratelimited",
  "internal_error",
  "fatal_error",
  "service_unavailable",
  "request_timeout",
] as const;

/** How long one call may take. */
export const SLACK_TIMEOUT_MS = 10_000;

function retryAfterOf(response: Response): number | null {
  const raw = response.headers.get("retry-after");
  if (raw === null || !/^\d{1,6}$/.test(raw.trim())) return null;
  return Math.max(1, Number(raw.trim()));
}

/** Posts `text` to `channel` as the bot; never throws. */
export async function postSlackMessage(input: {
  apiBase: string;
  token: string;
  channel: string;
  text: string;
  fetch?: typeof fetch;
}): Promise<SlackOutcome> {
  const send = input.fetch ?? fetch;
  let response: Response;
  try {
    response = await send(`${input.apiBase}/api/chat.postMessage`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${input.token}`,
        "content-type": "application/json; charset=utf-8",
      },
      body: JSON.stringify({ channel: input.channel, text: input.text, unfurl_links: false, mrkdwn: true }),
      redirect: "manual",
      signal: AbortSignal.timeout(SLACK_TIMEOUT_MS),
    });
  } catch (error) {
    const name = (error as Error)?.name;
    const reason =
      name === "TimeoutError" ? `timed out after ${SLACK_TIMEOUT_MS / 1000} s` : "connection failed";
    return { kind: "retry", error: reason, retryAfterSeconds: null };
  }
  if (response.status === 429) {
    await response.body?.cancel().catch(() => {});
    return { kind: "retry", error: "HTTP 429 rate limited", retryAfterSeconds: retryAfterOf(response) ?? 30 };
  }
  if (response.status >= 500) {
    await response.body?.cancel().catch(() => {});
    return { kind: "retry", error: `HTTP ${response.status}`, retryAfterSeconds: retryAfterOf(response) };
  }
  type SlackAnswer = { ok?: unknown; error?: unknown; ts?: unknown };
  const body: SlackAnswer | null = await response.json().then(
    (parsed) => (parsed && typeof parsed === "object" ? (parsed as SlackAnswer) : null),
    () => null,
  );
  if (response.status !== 200 || !body)
    return { kind: "permanent", error: `HTTP ${response.status} without a Slack answer` };
  if (body.ok === true) return { kind: "sent", ts: typeof body.ts === "string" ? body.ts : null };
  const error = typeof body.error === "string" ? body.error.slice(0, 100) : "unknown_error";
  if ((RETRYABLE_ERRORS as readonly string[]).includes(error))
    return { kind: "retry", error, retryAfterSeconds: retryAfterOf(response) };
  return { kind: "permanent", error };
}
