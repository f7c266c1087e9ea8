// The dashboard's in-process API client: typed answers with the problem on failure, and whole
// listings read page after page through the API's cursors.
import { describe, expect, test } from "bun:test";
import type { Actor } from "../../src/core/actor.ts";
import { DashboardApi, fieldErrorsOf, problemOf } from "../../src/http/dashboard/api.ts";

const actor: Actor = {
  kind: "session",
  credentialId: "ses_test",
  accountId: "acc_test",
  prefix: "",
  name: "test",
  environment: "live",
  scopes: [],
  workspaceAccessMode: "all",
  workspaceIds: [],
  expiresAt: null,
  requestId: "req_test",
};

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

describe("DashboardApi", () => {
  test("all() follows next_cursor until the listing ends, 100 at a time", async () => {
    const asked: string[] = [];
    const api = new DashboardApi(async (request) => {
      const url = new URL(request.url);
      asked.push(url.pathname + url.search);
      const after = url.searchParams.get("after");
      if (after === null)
        return json(200, { data: [{ id: "a" }, { id: "b" }], has_more: true, next_cursor: "c 1" });
      if (after === "c 1") return json(200, { data: [{ id: "c" }], has_more: true, next_cursor: "c2" });
      return json(200, { data: [{ id: "d" }], has_more: false, next_cursor: null });
    }, actor);
    const all = await api.all<{ id: string }>("/account/members");
    expect(all.ok && all.body.map((m) => m.id)).toEqual(["a", "b", "c", "d"]);
    expect(asked).toEqual([
      "/v1/account/members?limit=100",
      "/v1/account/members?limit=100&after=c%201",
      "/v1/account/members?limit=100&after=c2",
    ]);
  });

  test("all() answers the first refusal, with its problem", async () => {
    let pages = 0;
    const api = new DashboardApi(async () => {
      pages++;
      if (pages === 1) return json(200, { data: [{ id: "a" }], has_more: true, next_cursor: "n" });
      return json(403, { title: "Forbidden", detail: "no team:read", errors: [] });
    }, actor);
    const all = await api.all<{ id: string }>("/account/invitations?x=1");
    expect({ ok: all.ok, status: all.status, detail: problemOf(all)?.detail }).toEqual({
      ok: false,
      status: 403,
      detail: "no team:read",
    });
  });

  test("a refusal's field errors are read by pointer, the first per pointer", async () => {
    const api = new DashboardApi(
      async () =>
        json(400, {
          detail: "invalid",
          errors: [
            { pointer: "/name", detail: "is required" },
            { pointer: "/name", detail: "second" },
            { pointer: "/time_zone" },
          ],
        }),
      actor,
    );
    const answer = await api.call("POST", "/workspaces", { body: {} });
    expect([...fieldErrorsOf(answer)]).toEqual([
      ["/name", "is required"],
      ["/time_zone", "is not valid"],
    ]);
    const ok = await new DashboardApi(async () => json(200, { id: "w" }), actor).get<{ id: string }>("/w");
    expect(ok.ok && ok.body.id).toBe("w");
    expect(problemOf(ok)).toBeNull();
    expect([...fieldErrorsOf(ok)]).toEqual([]);
  });
});
