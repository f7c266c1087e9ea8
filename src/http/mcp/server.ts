// The MCP server both transports serve: the tools a caller may use (tools.ts), registered on the
// official server package, each answering the API's JSON.
import {
  fromJsonSchema,
  McpServer,
  type CallToolResult,
  type jsonSchemaValidator,
} from "@modelcontextprotocol/server";
import { HERALD_VERSION } from "../../herald.ts";
import { ProblemError } from "../../core/problem.ts";
import { toolsFor, type ApiAnswer, type ApiClient, type ToolCaller } from "./tools.ts";

/**
 * Arguments are checked by the API, not by the package: its problem (status, code, pointers) is the
 * answer an assistant gets for bad arguments, the same as a program gets. The schemas are advertised.
 */
const API_VALIDATES: jsonSchemaValidator = {
  getValidator: () => (input) => ({ valid: true, data: input as never, errorMessage: undefined }),
};

const INSTRUCTIONS =
  "Herald publishes posts to social networks. Start with list_workspaces, then list_destinations for " +
  "the accounts posts go to. Check a post with validate_post, store it with create_draft, and publish " +
  "only after the person agreed (publish_post with confirmed: true). Failed tool calls carry Herald's " +
  "problem: code, detail and errors with JSON pointers into the arguments.";

/** An API answer as a tool result: the JSON as structured content and as text; a problem is an error. */
export function toolResult(answer: ApiAnswer): CallToolResult {
  const body = answer.body ?? { status: answer.status };
  const structured =
    typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : { value: body };
  return {
    structuredContent: structured,
    content: [{ type: "text", text: JSON.stringify(body) }],
    ...(answer.status >= 400 ? { isError: true } : {}),
  };
}

/** The MCP server for one caller: only the tools its scopes and environment allow are registered. */
export function buildMcpServer(caller: ToolCaller, api: ApiClient): McpServer {
  const server = new McpServer({ name: "herald", version: HERALD_VERSION }, { instructions: INSTRUCTIONS });
  for (const tool of toolsFor(caller))
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: fromJsonSchema<Record<string, unknown>>(tool.inputSchema as never, API_VALIDATES),
        annotations: { title: tool.title, ...tool.annotations },
      },
      async (args) => {
        try {
          return toolResult(await tool.run((args ?? {}) as Record<string, unknown>, api));
        } catch (error) {
          // A check of the tool's own (an id missing, data too large) in the API's problem shape.
          if (error instanceof ProblemError) return toolResult(await api.problem(error));
          throw error;
        }
      },
    );
  return server;
}
