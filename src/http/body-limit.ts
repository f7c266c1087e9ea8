import { ProblemError } from "../core/problem.ts";

/** The contract's request body limit: 1 MiB. */
export const MAX_JSON_BODY_BYTES = 1_048_576;

/** 413 as the contract shapes it. */
export function payloadTooLarge(): ProblemError {
  return new ProblemError("public_payload_too_large", `The request body exceeds ${MAX_JSON_BODY_BYTES} bytes.`);
}

/** Malformed JSON is a 400 pointing at the whole body. */
function malformed(detail: string): ProblemError {
  return new ProblemError("public_invalid_request", "The request body is not valid JSON.", { errors: [{ pointer: "", code: "custom", detail }] });
}

/**
 * Reads a JSON body, counting bytes as they stream so chunked bodies are held to the limit too
 * (a declared Content-Length is checked before any byte is read).
 */
export async function readJsonBody(request: Request): Promise<unknown> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > MAX_JSON_BODY_BYTES) throw payloadTooLarge();
  if (!request.body) return undefined;
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > MAX_JSON_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      throw payloadTooLarge();
    }
    chunks.push(value);
  }
  if (total === 0) return undefined;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw malformed("The body is not valid UTF-8.");
  }
  const depth = nestingDepth(text);
  if (depth > MAX_JSON_DEPTH) throw malformed(`nests ${depth} levels deep; at most ${MAX_JSON_DEPTH} are accepted`);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw malformed((error as Error).message);
  }
}

/** No request of the contract nests deeper; a deeper body would only exhaust the validator's stack. */
export const MAX_JSON_DEPTH = 32;

/** The deepest nesting of arrays and objects in JSON text (brackets inside strings ignored), in one pass. */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91 /* { [ */) deepest = Math.max(deepest, ++depth);
    else if (c === 125 || c === 93 /* } ] */) depth--;
  }
  return deepest;
}
