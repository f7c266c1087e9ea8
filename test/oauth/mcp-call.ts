import { buildApp } from "../../src/app.ts";
import { markMcpDispatch } from "../../src/http/mcp-dispatch.ts";
import type { TestServer } from "../helpers/server.ts";

const apps = new WeakMap<object, ReturnType<typeof buildApp>>();

/**
 * An API request as the MCP endpoint dispatches a tool call: in-process and marked with
 * `markMcpDispatch`, the one way an OAuth access token reaches the API besides /mcp itself.
 */
export async function mcpRequest(
  s: Pick<TestServer, "herald" | "url">,
  token: string,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; body: any }> {
  let app = apps.get(s.herald);
  if (!app) apps.set(s.herald, (app = buildApp(s.herald)));
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const response = await app.handle(markMcpDispatch(new Request(`${s.url}/v1${path}`, { ...init, headers })));
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}
