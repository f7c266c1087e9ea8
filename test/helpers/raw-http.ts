import { connect } from "node:net";
import type { TestResponse } from "./server.ts";

/**
 * Sends `head` (request line and header lines, without the blank line) over a fresh TCP connection
 * to `url`'s port, exactly as written, and parses the answer (fixed-length or chunked body).
 */
export function rawRequest(url: string, head: string[], body = ""): Promise<TestResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write([...head, "Connection: close", "", body].join("\r\n"));
    });
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("end", () => {
      const raw = Buffer.concat(chunks).toString("latin1");
      const split = raw.indexOf("\r\n\r\n");
      const [statusLine, ...lines] = raw.slice(0, split).split("\r\n");
      const headers = new Headers();
      for (const line of lines) {
        const colon = line.indexOf(":");
        headers.append(line.slice(0, colon), line.slice(colon + 1).trim());
      }
      let text = raw.slice(split + 4);
      if (/chunked/i.test(headers.get("transfer-encoding") ?? "")) text = unchunk(text);
      text = Buffer.from(text, "latin1").toString("utf8");
      const json = /json/.test(headers.get("content-type") ?? "");
      const status = Number(statusLine!.split(" ")[1]);
      resolve({ status, headers, text, body: json ? JSON.parse(text) : undefined });
    });
  });
}

function unchunk(text: string): string {
  let out = "";
  let at = 0;
  for (;;) {
    const lineEnd = text.indexOf("\r\n", at);
    const size = parseInt(text.slice(at, lineEnd), 16);
    if (!size) return out;
    out += text.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
}
