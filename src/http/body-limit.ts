import { ProblemError } from "../core/problem.ts";

/** The contract's request body limit: 1 MiB. */
export const MAX_JSON_BODY_BYTES = 1_048_576;

/** 413 as the contract shapes it; `hint` says what to do instead (see `tooLargeHint`). */
export function payloadTooLarge(hint?: string): ProblemError {
  const detail = `The request body exceeds ${MAX_JSON_BODY_BYTES} bytes.`;
  return new ProblemError("public_payload_too_large", hint ? `${detail} ${hint}` : detail);
}

// Routes whose big bodies have a way out, by the end of their path.
const TOO_LARGE_HINTS: [RegExp, string][] = [
  [/\/post-imports$/, "Split the CSV into several files of fewer rows and import each one."],
];

/** What a 413 adds for the route of `request`, if anything. */
function tooLargeHint(request: Request): string | undefined {
  const path = new URL(request.url).pathname;
  return TOO_LARGE_HINTS.find(([route]) => route.test(path))?.[1];
}

/** Malformed JSON is a 400 pointing at the whole body. */
function malformed(detail: string): ProblemError {
  return new ProblemError("public_invalid_request", "The request body is not valid JSON.", {
    errors: [{ pointer: "", code: "custom", detail }],
  });
}

/** A body the JSON routes do not read: 415 naming the media type that was sent. */
function unsupportedMediaType(contentType: string | null): ProblemError {
  const sent = contentType === null ? "no Content-Type" : `Content-Type ${JSON.stringify(contentType)}`;
  const detail = `The request body must be application/json; it was sent with ${sent}.`;
  return new ProblemError("public_unsupported_media_type", detail, {
    errors: [{ pointer: "", code: "custom", detail: "must be application/json", parameter: "Content-Type" }],
  });
}

/** `application/json` or any `…/…+json`, with or without parameters such as `charset`. */
const JSON_MEDIA_TYPE = /^\s*(?:application\/json|[a-z0-9!#$&^_.-]+\/[a-z0-9!#$&^_.-]+\+json)\s*(?:;|$)/i;

/** Whether a Content-Type names JSON (the parameters are not checked: JSON is UTF-8). */
export function isJsonMediaType(contentType: string | null): boolean {
  return contentType !== null && JSON_MEDIA_TYPE.test(contentType);
}

/**
 * Reads a JSON body, counting bytes as they stream so chunked bodies are held to the limit too
 * (a declared Content-Length is checked before any byte is read).
 */
export async function readJsonBody(request: Request): Promise<unknown> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > MAX_JSON_BODY_BYTES)
    throw payloadTooLarge(tooLargeHint(request));
  if (!request.body) return undefined;
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    // Checked once a byte arrives: a request without a body needs no Content-Type.
    if (total === 0 && value.byteLength > 0 && !isJsonMediaType(request.headers.get("content-type"))) {
      await reader.cancel().catch(() => {});
      throw unsupportedMediaType(request.headers.get("content-type"));
    }
    total += value.byteLength;
    if (total > MAX_JSON_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      throw payloadTooLarge(tooLargeHint(request));
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
  if (depth > MAX_JSON_DEPTH) {
    const summary = `The request body nests deeper than ${MAX_JSON_DEPTH} levels.`;
    const detail = `nests ${depth} levels deep; at most ${MAX_JSON_DEPTH} are accepted`;
    throw new ProblemError("public_invalid_request", summary, {
      errors: [{ pointer: "", code: "custom", detail }],
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw malformed((error as Error).message);
  }
  // UTF-8 was decoded strictly, so a lone surrogate can only come from a \uD8xx–\uDFxx escape.
  if (LONE_SURROGATE_ESCAPE.test(text)) {
    const pointer = illFormedString(value, "", (s) => !s.isWellFormed());
    if (pointer !== null) {
      const summary = "The request body holds a string with a lone UTF-16 surrogate.";
      const detail = "holds a lone UTF-16 surrogate (an unpaired \\uD800–\\uDFFF escape)";
      throw new ProblemError("public_invalid_request", summary, {
        errors: [{ pointer, code: "custom", detail }],
      });
    }
  }
  // No field of the API holds a NUL, and PostgreSQL text cannot store one (a 500 there before).
  if (text.includes("\\u0000")) {
    const pointer = illFormedString(value, "", (s) => s.includes("\0"));
    if (pointer !== null) {
      throw new ProblemError(
        "public_invalid_request",
        "The request body holds a string with a NUL character.",
        {
          errors: [{ pointer, code: "custom", detail: "holds a NUL character (\\u0000)" }],
        },
      );
    }
  }
  return value;
}

const LONE_SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** RFC 6901 escaping of one reference token. */
function token(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** The JSON pointer of the first string or property name that is `bad`, or null. */
function illFormedString(value: unknown, pointer: string, bad: (s: string) => boolean): string | null {
  if (typeof value === "string") return bad(value) ? pointer : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = illFormedString(value[i], `${pointer}/${i}`, bad);
      if (found !== null) return found;
    }
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (bad(key)) return `${pointer}/${token(key)}`;
      const found = illFormedString(item, `${pointer}/${token(key)}`, bad);
      if (found !== null) return found;
    }
  }
  return null;
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
