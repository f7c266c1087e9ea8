// Seeds a Herald database with a million posts of one workspace, their receipts, and the outbox events
// and audit records retention keeps of them by default (30 days, a year), in a few set-based
// statements (the database generates the rows; nothing crosses the wire per row), for bench/growth.ts.
// Seeded ids sort before every id Herald makes (`…_00…` against ULIDs starting `01`), so seeded posts
// are the oldest, as in a database that grew over two years.
import { Database } from "bun:sqlite";
import { SQL } from "bun";

/** The nine channels, one destination each; the last is rare (0.1 % of the posts). */
export const SEED_CHANNELS = [
  "mastodon",
  "bluesky",
  "x",
  "linkedin",
  "facebook",
  "instagram",
  "threads",
  "youtube",
  "tiktok",
] as const;

/** What the growth benchmark's filters need to know about the seeded rows. */
export interface Seeded {
  posts: number;
  /** A group of three seeded posts. */
  group: string;
  /** The destination that holds 0.1 % of the posts, and its channel. */
  rareDestinationId: string;
  rareChannel: string;
  /** The creation time of the seeded post 1 % from the newest end (a `created_after` with few posts). */
  recentCreatedAt: number;
  /** The creation time of the seeded post in the middle (a `created_after` with half the posts). */
  middleCreatedAt: number;
  /** The earliest scheduled time of the seeded scheduled posts (a `scheduled_before` with few posts). */
  firstScheduledAt: number;
}

const MINUTE = 60_000;
const DAY = 1440 * MINUTE;
/** Outbox events and audit records as retention keeps them by default (src/config.ts). */
const EVENTS_KEPT_MS = 30 * DAY;
const AUDIT_KEPT_MS = 365 * DAY;

/**
 * The statements: `n` is the row number (1…count) from the engine's own series, `id(prefix)` an id
 * of that number. Post n: state by n % 200 (90 % published, 3 % drafts, 3 % scheduled in the future,
 * 2 % cancelled, 1 % failed, 0.5 % needs-attention, 0.5 % missed), destination n % 8 except every
 * 1000th on the rare ninth, a group per three posts, one post a minute up to an hour ago (two years
 * for a million); a receipt per published post, an event per post published in the last 30 days and
 * an audit record per post created in the last year.
 */
function statements(dialect: "sqlite" | "pg", count: number, ws: string, now: number): string[] {
  const series =
    dialect === "sqlite"
      ? `(WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${count}) SELECT n FROM s) AS s`
      : `generate_series(1::bigint, ${count}::bigint) AS s(n)`;
  const pad = dialect === "sqlite" ? `printf('%024d', n)` : `lpad(n::text, 24, '0')`;
  const id = (prefix: string) => `'${prefix}_00' || ${pad}`;
  const start = now - (count + 60) * MINUTE;
  const created = `(${start} + n * ${MINUTE})`;
  const slot = "(n % 200)";
  const state = `CASE WHEN ${slot} < 2 THEN 'failed' WHEN ${slot} = 2 THEN 'needs-attention'
    WHEN ${slot} = 3 THEN 'missed' WHEN ${slot} < 10 THEN 'draft' WHEN ${slot} < 16 THEN 'scheduled'
    WHEN ${slot} < 20 THEN 'cancelled' ELSE 'published' END`;
  const dest = `(CASE WHEN n % 1000 = 0 THEN 8 ELSE n % 8 END)`;
  const channel = `CASE ${dest} ${SEED_CHANNELS.map((c, i) => `WHEN ${i} THEN '${c}'`).join(" ")} END`;
  const scheduledAt = `(${now} + 3600000 + (n % 1000) * 3600000)`;
  const isScheduled = `${slot} >= 10 AND ${slot} < 16`;
  const isPublished = `${slot} >= 20`;
  const published = `(${created} + ${MINUTE})`;
  const payload = [
    `'{"id":"' || ${id("send")} || '","object":"post","group":"g' || (n / 3) || '","channel":"mastodon",`,
    `"state":"published","url":"https://mastodon.example/@bench/' || n || '","error":null,`,
    `"content":{"headline":"","body":["Seeded post ' || n || '"]}}'`,
  ].join("");
  return [
    `INSERT INTO destinations (id, workspace_id, channel, display_name, handle, external_id, origin,
       credentials_sealed, limits, created_at, updated_at)
     VALUES ${SEED_CHANNELS.map(
       (c, i) =>
         `('dest_bench_${i}', '${ws}', '${c}', 'Bench ${c}', 'bench-${c}', 'ext-${i}', ` +
         `'https://${c}.example', 'sealed', '{}', ${start}, ${start})`,
     ).join(", ")}`,
    `INSERT INTO posts (id, workspace_id, group_key, channel, destination_id, state, version, headline, body,
       destination_options, asset_items, schedule_mode, scheduled_at, time_zone, retry_safety, next_action_at,
       published_at, cancelled_at, missed_at, created_at, updated_at)
     SELECT ${id("send")}, '${ws}', 'g' || (n / 3), ${channel}, 'dest_bench_' || ${dest}, ${state}, 1, '',
       '["Seeded post ' || n || ', a body of an ordinary length for a social network post."]', '{}', '[]',
       CASE WHEN ${isScheduled} THEN 'exact' ELSE 'now' END,
       CASE WHEN ${isScheduled} THEN ${scheduledAt} ELSE NULL END, 'UTC', 'safe',
       CASE WHEN ${isScheduled} THEN ${scheduledAt} ELSE NULL END,
       CASE WHEN ${isPublished} THEN ${published} ELSE NULL END,
       CASE WHEN ${slot} >= 16 AND ${slot} < 20 THEN ${published} ELSE NULL END,
       CASE WHEN ${slot} = 3 THEN ${published} ELSE NULL END,
       ${created}, ${published}
     FROM ${series}`,
    `INSERT INTO receipts (id, post_id, item_index, provider_object_id, url, extra, state, published_at)
     SELECT ${id("rcpt")}, ${id("send")}, 0, 'obj-' || n, 'https://mastodon.example/@bench/' || n, '{}',
       'published', ${published}
     FROM ${series} WHERE ${isPublished}`,
    `INSERT INTO events_outbox (id, workspace_id, type, post_id, destination_id, payload, created_at,
       dispatched_at, chat_dispatched_at)
     SELECT ${id("evt")}, '${ws}', 'post.published', ${id("send")}, 'dest_bench_' || ${dest}, ${payload},
       ${published}, ${published}, ${published}
     FROM ${series} WHERE ${isPublished} AND ${created} >= ${now - EVENTS_KEPT_MS}`,
    `INSERT INTO audit_records (id, account_id, credential_id, action, workspace_id, target_type, target_id,
       request_id, client_request_id, created_at)
     SELECT ${id("aud")}, (SELECT account_id FROM workspaces WHERE id = '${ws}'), NULL, 'post.created',
       '${ws}', 'post', ${id("send")}, NULL, NULL, ${created}
     FROM ${series} WHERE ${created} >= ${now - AUDIT_KEPT_MS}`,
  ];
}

function seeded(count: number, now: number): Seeded {
  const start = now - (count + 60) * MINUTE;
  return {
    posts: count,
    group: `g${Math.floor(count / 2 / 3)}`,
    rareDestinationId: "dest_bench_8",
    rareChannel: SEED_CHANNELS[8],
    recentCreatedAt: start + Math.floor(count * 0.99) * MINUTE,
    middleCreatedAt: start + Math.floor(count / 2) * MINUTE,
    firstScheduledAt: now + 3600000,
  };
}

/** Seeds the SQLite file `path` (Herald's own schema, already migrated); PostgreSQL is analyzed after. */
export async function seedPosts(
  database: { sqlitePath: string } | { postgresUrl: string },
  workspaceId: string,
  count: number,
  now = Date.now(),
): Promise<Seeded> {
  if ("sqlitePath" in database) {
    const db = new Database(database.sqlitePath);
    db.exec("PRAGMA busy_timeout = 10000");
    db.exec("PRAGMA foreign_keys = ON");
    for (const statement of statements("sqlite", count, workspaceId, now))
      db.transaction(() => db.exec(statement))();
    // Herald never runs ANALYZE: plans are measured as a database that grew without statistics has them.
    db.close();
  } else {
    const sql = new SQL(database.postgresUrl, { max: 1 });
    try {
      for (const statement of statements("pg", count, workspaceId, now)) await sql.unsafe(statement);
      // Autovacuum analyzes a table after this many new rows; done at once here, as it would be soon.
      await sql.unsafe("ANALYZE");
    } finally {
      await sql.close();
    }
  }
  return seeded(count, now);
}
