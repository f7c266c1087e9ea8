// Elysia compiles each route from the source of its handler and hooks: a handler or global hook that
// hands its context on whole makes every request copy the headers and parse cookies. The API reads
// neither (its callers send a bearer key, and headers are read from the request), so no /v1 route may
// compile them in. This keeps a measured cost (up to 10% of a request) from coming back unseen.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildApp } from "../src/app.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.stop();
});

interface CompiledRoute {
  method: string;
  path: string;
  compile(): unknown;
}

describe("compiled API routes", () => {
  test("no /v1 route copies the headers or parses cookies", () => {
    const routes = (buildApp(s.herald) as unknown as { routes: CompiledRoute[] }).routes.filter((r) =>
      r.path.startsWith("/v1/"),
    );
    expect(routes.length).toBeGreaterThan(50);
    const costly = routes
      .filter((r) => {
        const source = String(r.compile());
        return source.includes("parseCookie(") || source.includes("c.headers=c.request.headers.toJSON()");
      })
      .map((r) => `${r.method} ${r.path}`);
    expect(costly).toEqual([]);
  });
});
