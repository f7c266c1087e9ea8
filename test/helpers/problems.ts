import { expect } from "bun:test";
import type { TestResponse } from "./server.ts";

/**
 * Asserts a full contract problem+json response: status, media type, every field, the request id
 * matching the header, and (optionally) the pointers of `errors[]`.
 */
export function expectProblem(
  response: TestResponse,
  status: number,
  code: string,
  pointers?: string[],
): void {
  expect({ status: response.status, text: response.text }).toMatchObject({ status });
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  const body = response.body;
  const requestId = response.headers.get("service-request-id");
  expect(requestId).toBeTruthy();
  expect(body.code).toBe(code);
  expect(body.status).toBe(status);
  expect(body.type).toEndWith(`/reference/errors#${code}`);
  expect(typeof body.title).toBe("string");
  expect(typeof body.detail).toBe("string");
  expect(body.instance).toBe(`urn:service:request:${requestId}`);
  expect(body.request_id).toBe(requestId);
  expect(typeof body.retryable).toBe("boolean");
  expect(Array.isArray(body.errors)).toBe(true);
  if (status === 413) {
    expect(body).not.toHaveProperty("category");
    expect(body).not.toHaveProperty("retry");
    expect(body).not.toHaveProperty("user_action");
  } else {
    expect(typeof body.category).toBe("string");
    expect(typeof body.user_action).toBe("string");
    expect(["safe", "unsafe", "not_retryable"]).toContain(body.retry.safety);
  }
  if (pointers)
    expect(body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual([...pointers].sort());
}
