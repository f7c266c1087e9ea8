// The read benchmark's baseline: a bare Bun.serve doing the least work an authenticated
// `GET /v1/workspaces/{ws}/posts/{id}` needs: SHA-256 of the bearer key, the key looked up by its hash,
// the post row fetched and serialized. Prepared statements on Herald's own database (bun:sqlite on the
// WAL file, or Bun.SQL on PostgreSQL); no validation, problems, rate limit, ETag or audit. It is the
// ceiling Herald's figure is compared with, in its own process like Herald's.
// Usage: bun bench/baseline-server.ts <database file or postgres:// URL> <port>
import { Database } from "bun:sqlite";
import { SQL } from "bun";

const [target, port] = process.argv.slice(2);
if (!target || !port) throw new Error("usage: bun bench/baseline-server.ts <database> <port>");

const hasher = new Bun.CryptoHasher("sha256");
const unauthorized = () => new Response(null, { status: 401 });

/** The bearer key's hash, or null when the header is not `Bearer <key>`. */
function keyHash(request: Request): string | null {
  const bearer = /^Bearer (\S+)$/.exec(request.headers.get("authorization") ?? "");
  return bearer ? hasher.update(bearer[1]!).digest("hex") : null;
}

/** The workspace and post ids of /v1/workspaces/{ws}/posts/{id}. */
function postPath(request: Request): [string, string] {
  const path = new URL(request.url).pathname.split("/");
  return [path[3]!, path[5]!];
}

function answer(post: unknown): Response {
  return post ? Response.json(post) : new Response(null, { status: 404 });
}

let fetch: (request: Request) => Response | Promise<Response>;
if (target.startsWith("postgres")) {
  const sql = new SQL(target, { max: 10 });
  fetch = async (request) => {
    const hash = keyHash(request);
    const [key] = hash
      ? await sql`SELECT id, scopes, revoked_at FROM api_keys WHERE secret_hash = ${hash}`
      : [];
    if (!key || key.revoked_at !== null) return unauthorized();
    const [ws, id] = postPath(request);
    return answer((await sql`SELECT * FROM posts WHERE id = ${id} AND workspace_id = ${ws}`)[0]);
  };
} else {
  // Synchronous, as bun:sqlite is: no promise per request.
  const db = new Database(target, { readonly: true });
  db.run("PRAGMA busy_timeout = 5000");
  const keyQuery = db.prepare("SELECT id, scopes, revoked_at FROM api_keys WHERE secret_hash = ?");
  const postQuery = db.prepare("SELECT * FROM posts WHERE id = ? AND workspace_id = ?");
  fetch = (request) => {
    const hash = keyHash(request);
    const key = hash ? (keyQuery.get(hash) as { revoked_at: number | null } | null) : null;
    if (!key || key.revoked_at !== null) return unauthorized();
    const [ws, id] = postPath(request);
    return answer(postQuery.get(id, ws));
  };
}

Bun.serve({ hostname: "127.0.0.1", port: Number(port), fetch });
