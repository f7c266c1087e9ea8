// The official MCP client on Herald's `/mcp` (or `herald mcp` over stdio), as an assistant uses it.
import { expect } from "bun:test";
import { Client, StreamableHTTPClientTransport, type CallToolResult } from "@modelcontextprotocol/client";

/** The protocol eras a client may speak: the 2025 handshake, or the stateless 2026-07-28 revision. */
export const ERAS = [
  { name: "2025 (initialize handshake)", mode: "legacy" as const },
  { name: "2026-07-28 (stateless)", mode: { pin: "2026-07-28" } },
];
export type Era = (typeof ERAS)[number];

/** A client connected to `<origin>/mcp` with `key` as its bearer credential. */
export async function mcpClient(origin: string, key: string, era: Era = ERAS[0]!): Promise<Client> {
  const client = new Client(
    { name: "herald-tests", version: "1.0.0" },
    { versionNegotiation: { mode: era.mode } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}

/** The names of the tools a client is offered, in order. */
export async function toolNames(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((t) => t.name);
}

/** Calls a tool and asserts it succeeded; returns its structured content (the API's JSON). */
export async function callOk(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect({ name, isError: result.isError ?? false, content: result.content }).toMatchObject({
    isError: false,
  });
  // The same JSON as text, for clients that read only the content.
  const text = result.content.find((c) => c.type === "text");
  expect(text && JSON.parse((text as { text: string }).text)).toEqual(result.structuredContent as any);
  return result.structuredContent;
}

/**
 * Calls a tool that the API refuses; asserts a tool error (never a protocol error) carrying the
 * problem with `status`, `code` and the `pointers` of its errors, and returns the problem.
 */
export async function callRefused(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  status: number,
  code: string,
  pointers?: string[],
): Promise<any> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError).toBe(true);
  const problem = result.structuredContent as any;
  expect({ status: problem.status, code: problem.code }).toEqual({ status, code });
  expect(problem.type).toEndWith(`/reference/errors#${code}`);
  expect(problem.request_id).toBeString();
  const text = result.content.find((c) => c.type === "text") as { text: string };
  expect(JSON.parse(text.text)).toEqual(problem);
  if (pointers) expect(problem.errors.map((e: { pointer: string }) => e.pointer)).toEqual(pointers);
  return problem;
}
