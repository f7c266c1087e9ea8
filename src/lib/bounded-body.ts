/** A request's or a response's body: what a bounded read needs of either. */
interface Message {
  headers: Headers;
  body: ReadableStream<Uint8Array> | null;
}

/**
 * A body's bytes, counted as they stream (so a chunked body is held to the limit too); null once it
 * passes `max` bytes (declared or read), and the rest is not read.
 */
export async function boundedBytes(message: Message, max: number): Promise<Uint8Array | null> {
  if (Number(message.headers.get("content-length") ?? "0") > max) return null;
  if (!message.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = message.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** A body as UTF-8 text, at most `max` bytes; null past it (see boundedBytes). */
export async function boundedText(message: Message, max: number): Promise<string | null> {
  const bytes = await boundedBytes(message, max);
  return bytes === null
    ? null
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
}
