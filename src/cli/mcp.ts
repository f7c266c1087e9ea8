// `herald mcp`: the MCP tools of `/mcp` served over stdio to a local assistant, each tool calling the
// remote API over HTTP with the CLI's credential. Standard output carries the protocol only: anything
// said to a person goes to stderr.
import { HERALD_VERSION } from "../herald.ts";
import { problemResponse } from "../core/problem.ts";
import { newRequestId } from "../http/request-id.ts";
import type { ApiAnswer, ApiClient, ApiRequest, ToolCaller } from "../http/mcp/tools.ts";
import { call } from "./api.ts";
import { connect, type Connection } from "./credentials.ts";
import { UsageError } from "./errors.ts";
import { answerOf, apiRequestOf } from "../http/mcp-wire.ts";

/** `herald mcp --help`. */
export const MCP_HELP = `Usage: herald mcp

Serves Herald's MCP tools over stdio for an assistant on this computer (Claude Desktop, a code
editor…): the assistant starts this command and speaks the Model Context Protocol on its stdin and
stdout. Each tool calls the Herald API with this computer's login (herald login), or HERALD_API_KEY
with HERALD_API_URL; the tools offered are the ones the key's scopes and environment allow (a test
key never publishes). Nothing but the protocol is written to stdout; problems go to stderr.

See docs/mcp.md for the tools and how to add Herald to an assistant.`;

/** The tools' way to the API from `herald mcp`: HTTP to the server, with the connection's key. */
export function remoteApi(connection: Connection): ApiClient {
  const base = `${connection.apiUrl}/v1`;
  const reach = async (request: Request): Promise<ApiAnswer> => {
    try {
      return await answerOf(await fetch(request));
    } catch (error) {
      throw new Error(`cannot reach Herald at ${connection.apiUrl} (${(error as Error).message})`);
    }
  };
  return {
    send(request: ApiRequest) {
      const headers = {
        authorization: `Bearer ${connection.apiKey}`,
        "user-agent": `herald-mcp/${HERALD_VERSION}`,
      };
      return reach(apiRequestOf(base, request, headers));
    },
    upload: (url, headers, bytes) => reach(new Request(url, { method: "PUT", headers, body: bytes })),
    // Found before any request: the problem gets an id of its own, as the server would give it.
    problem: (problem) => answerOf(problemResponse(problem, newRequestId(), `${base}/docs`)),
  };
}

/**
 * Serves the tools on stdin/stdout until the assistant closes stdin. The calling key's scopes and
 * environment (GET /v1/me) decide which tools are offered, as they do at `/mcp`.
 */
export async function runMcp(args: string[]): Promise<void> {
  if (args.length > 0) throw new UsageError(`mcp takes no arguments (got ${args.join(" ")})`);
  const connection = await connect("the scopes of the tools the assistant may use");
  const me = await call({ apiUrl: connection.apiUrl, apiKey: connection.apiKey }, "GET", "/me");
  const caller: ToolCaller = {
    scopes: me.authentication.scopes,
    environment: me.authentication.environment,
  };
  const [{ serveStdio }, { buildMcpServer }] = await Promise.all([
    import("@modelcontextprotocol/server/stdio"),
    import("../http/mcp/server.ts"),
  ]);
  const api = remoteApi(connection);
  serveStdio(() => buildMcpServer(caller, api), {
    onerror: (error) => process.stderr.write(`herald mcp: ${error.message}\n`),
  });
}
