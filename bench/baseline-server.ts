// The read benchmark's baseline: a bare Bun.serve doing the least work an authenticated
// `GET /v1/workspaces/{ws}/posts/{id}` needs (SHA-256 of the bearer key, the key looked up by its hash,
// the post row fetched and serialized) with prepared bun:sqlite statements on Herald's own database file
// (WAL). No validation, problems, rate limit, ETag, or audit: the ceiling Herald is measured against.
// Usage: bun bench/baseline-server.ts <database file> <port>
import { Database } from "bun:sqlite";

const [file, port] = process.argv.slice(2);
if (!file || !port) throw new Error("usage: bun bench/baseline-server.ts <database file> <port>");
const db = new Database(file, { readonly: true });
db.run("PRAGMA busy_timeout = 5000");
const keyByHash = db.prepare("SELECT id, scopes, revoked_at FROM api_keys WHERE secret_hash = ?");
const postById = db.prepare("SELECT * FROM posts WHERE id = ? AND workspace_id = ?");
const hasher = new Bun.CryptoHasher("sha256");

Bun.serve({
  hostname: "127.0.0.1",
  port: Number(port),
  fetch(request) {
    const bearer = /^Bearer (\S+)$/.exec(request.headers.get("authorization") ?? "");
    if (!bearer) return new Response(null, { status: 401 });
    const hash = hasher.update(bearer[1]!).digest("hex");
    const key = keyByHash.get(hash) as { revoked_at: number | null } | null;
    if (!key || key.revoked_at !== null) return new Response(null, { status: 401 });
    const path = new URL(request.url).pathname.split("/");
    const post = postById.get(path[5]!, path[3]!);
    if (!post) return new Response(null, { status: 404 });
    return Response.json(post);
  },
});
