// A faithful local fake of Slack's Web API method chat.postMessage (api.slack.com/methods/chat.postMessage):
// `POST /api/chat.postMessage` with a bot token as `Authorization: Bearer xoxb-…`, a JSON (or form)
// body with `channel` and `text`; every answer is HTTP 200 with `{ok: true, channel, ts, message}` or
// `{ok: false, error}` (not_authed, invalid_auth, channel_not_found, not_in_channel, is_archived,
// no_text, msg_too_long), except rate limiting: HTTP 429 with `Retry-After` (seconds) and
// `{ok: false, error: "ratelimited"}`.
import { json, newControls, readBody, serveFake, type FailSpec, type FakeControls } from "./shared.ts";

/** A conversation of the fake workspace; `member` says whether the bot was invited to it. */
export interface FakeChannel {
  id: string;
  name: string;
  member: boolean;
  archived?: boolean;
}

/** A message the fake accepted. */
export interface FakeSlackMessage {
  channel: string;
  text: string;
  ts: string;
  body: Record<string, unknown>;
}

/** The running fake. */
export interface SlackFake extends FakeControls {
  origin: string;
  /** The bot token the fake accepts. */
  token: string;
  channels: FakeChannel[];
  messages: FakeSlackMessage[];
  stop(): Promise<void>;
}

/** Slack's longest `text` (it truncates beyond 40,000 characters and refuses far longer ones). */
const MAX_TEXT = 40_000;

export function startSlackFake(options: { token?: string; channels?: FakeChannel[] } = {}): SlackFake {
  const failures: { remaining: number; spec: FailSpec }[] = [];
  const controls = newControls(failures);
  const fake: SlackFake = Object.assign(controls, {
    token: options.token ?? "xoxb-1111-2222-faketoken",
    channels: options.channels ?? [
      { id: "C0HERALD01", name: "herald-alerts", member: true },
      { id: "C0NOTJOIND", name: "random", member: false },
      { id: "C0ARCHIVED", name: "old", member: true, archived: true },
    ],
    messages: [] as FakeSlackMessage[],
  });
  let clock = 1_700_000_000;
  let counter = 0;

  const route = async (request: Request, url: URL): Promise<Response> => {
    if (url.pathname !== "/api/chat.postMessage") return json({ ok: false, error: "unknown_method" }, 404);
    if (request.method !== "POST") return json({ ok: false, error: "invalid_request" });
    const auth = request.headers.get("authorization") ?? "";
    const body = await readBody(request);
    if (!auth.startsWith("Bearer ")) return json({ ok: false, error: "not_authed" });
    if (auth.slice(7) !== fake.token) return json({ ok: false, error: "invalid_auth" });
    const channel = fake.channels.find((c) => c.id === body.channel || `#${c.name}` === body.channel);
    if (!channel) return json({ ok: false, error: "channel_not_found" });
    if (channel.archived) return json({ ok: false, error: "is_archived" });
    if (!channel.member) return json({ ok: false, error: "not_in_channel" });
    const text = typeof body.text === "string" ? body.text : "";
    if (text === "" && !body.blocks && !body.attachments) return json({ ok: false, error: "no_text" });
    if (text.length > MAX_TEXT * 4) return json({ ok: false, error: "msg_too_long" });
    const ts = `${clock++}.${String(++counter).padStart(6, "0")}`;
    fake.messages.push({ channel: channel.id, text, ts, body });
    return json({
      ok: true,
      channel: channel.id,
      ts,
      message: { type: "message", subtype: "bot_message", text, bot_id: "B0FAKEBOT1", ts },
    });
  };

  const served = serveFake({
    controls,
    failures,
    defaultFailure: (status) =>
      status === 429
        ? { body: { ok: false, error: "ratelimited" }, headers: { "retry-after": "1" } }
        : { body: { ok: false, error: "internal_error" } },
    route,
  });
  fake.origin = served.origin;
  fake.stop = served.stop;
  return fake;
}
