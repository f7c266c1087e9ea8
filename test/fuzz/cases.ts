// One fuzz case per request: who sends it, path parameters (real ids mixed with random ones), query,
// headers and body, each valid or bent at a boundary.
import fc from "fast-check";
import { valueOf, type Hints } from "./arbitraries.ts";
import type { Operation } from "./document.ts";
import { mutatedBody, NASTY_STRINGS, RAW_BODIES } from "./mutations.ts";
import type { KeyKind, World } from "./world.ts";

/** A request to make, before the live parts (current ETag, fresh Idempotency-Key) are filled in. */
export interface FuzzCase {
  key: KeyKind;
  /** Index into MALFORMED_AUTHORIZATIONS when `key` is "malformed". */
  malformed: number;
  params: Record<string, string>;
  query: [string, string][];
  headers: Record<string, string>;
  /** "current" is the resource's ETag read just before; anything else is sent as it is. */
  ifMatch: string | null;
  /** "fresh" is a key never used before. */
  idempotencyKey: string | null;
  body: { kind: "none" } | { kind: "json"; value: unknown } | { kind: "raw"; text: string };
  /** Sent as a stream (chunked, no Content-Length) instead of a fixed-length body. */
  chunked: boolean;
  /** What was bent, for the failure report. */
  labels: string[];
}

/** Authorization values that are not a key of this server. */
export const MALFORMED_AUTHORIZATIONS = [
  "Bearer hk_live_short",
  "Bearer hk_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
  "Basic Zm9vOmJhcg==",
  "Bearer",
  "Bearer ",
  "bearer {live}",
  "Bearer  {live}",
  "Bearer {live} extra",
  "Bearer {live}\u00e9",
  `Bearer ${"k".repeat(3000)}`,
];

/** Path parameter values: mostly real ids of that kind, sometimes another kind's or made up. */
function paramValue(world: World, name: string): fc.Arbitrary<string> {
  const own = world.pools[name] ?? world.pools.workspace_id!;
  const everyId = Object.values(world.pools).flat();
  return (
    fc
      .oneof(
        { weight: 8, arbitrary: fc.constantFrom(...own) },
        { weight: 1, arbitrary: fc.constantFrom(...everyId) },
        { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 40 }) },
        { weight: 1, arbitrary: fc.constantFrom(...NASTY_STRINGS.filter((s) => s !== ""), "x".repeat(300)) },
      )
      // "." and ".." are dot segments: the URL parser removes them, so they never reach the server as ids.
      .filter((value) => value !== "." && value !== "..")
  );
}

/** `arbitrary` one time in `n`, else undefined. */
const rarely = <T>(arbitrary: fc.Arbitrary<T>, n = 10) =>
  fc.oneof({ weight: n - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });

const HEADER_TEXT = fc.stringMatching(/^[\x21-\x7e]{0,20}$/);
const CONTENT_TYPES = [
  "application/json; charset=utf-8",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/merge-patch+json",
  "APPLICATION/JSON",
  "application/jsonx",
  "application/json; charset=latin1",
];

function queryOf(
  op: Operation,
  hints: Hints,
): fc.Arbitrary<{ query: [string, string][]; label: string | null }> {
  const declared = op.parameters.filter((p) => p.in === "query");
  const pairs = declared.map((p) =>
    // Each declared parameter half the time.
    fc.option(
      valueOf(p.schema, hints, p.name).map((v) => [p.name, String(v)] as [string, string]),
      { freq: 2 },
    ),
  );
  const extra = fc.oneof(
    { weight: 20, arbitrary: fc.constant(null) },
    {
      weight: 1,
      arbitrary: HEADER_TEXT.map((v) => ({ label: "unknown query parameter", pair: ["fuzz", v] })),
    },
    {
      weight: 1,
      arbitrary: fc.constant({ label: "URL past 16 KiB", pair: ["fuzz", "q".repeat(17_000)] }),
    },
    { weight: 1, arbitrary: fc.constant({ label: "repeated query parameter", pair: ["repeat", ""] }) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(...NASTY_STRINGS)
        .map((v) => ({ label: "odd query value", pair: ["odd", v] })),
    },
  );
  return fc.tuple(fc.tuple(...pairs), extra).map(([chosen, bent]) => {
    const query = chosen.filter((p): p is [string, string] => p !== null);
    if (bent?.label === "repeated query parameter") {
      const first = query[0] ?? ["limit", "5"];
      return { query: [...query, first, [first[0], "2"]], label: bent.label };
    }
    if (bent?.label === "odd query value") {
      const name = declared[0]?.name ?? "fuzz";
      return { query: [...query, [name, bent.pair[1]!] as [string, string]], label: bent.label };
    }
    if (bent) return { query: [...query, bent.pair as [string, string]], label: bent.label };
    return { query, label: null };
  });
}

type BodyChoice = { body: FuzzCase["body"]; label: string | null };

function bodyOf(
  op: Operation,
  hints: Hints,
  templates: Record<string, fc.Arbitrary<unknown>>,
): fc.Arbitrary<BodyChoice> {
  const raw = fc
    .constantFrom(...RAW_BODIES)
    .map((r) => ({ body: { kind: "raw" as const, text: r.text }, label: r.label }));
  // fetch sends no body with a GET (and Herald reads none).
  if (op.method === "GET") return fc.constant<BodyChoice>({ body: { kind: "none" }, label: null });
  if (!op.body)
    return fc.oneof(
      { weight: 8, arbitrary: fc.constant({ body: { kind: "none" as const }, label: null }) },
      {
        weight: 1,
        arbitrary: fc.constant({
          body: { kind: "json" as const, value: { x: 1 } },
          label: "unexpected body",
        }),
      },
      { weight: 1, arbitrary: raw },
    );
  const template = templates[op.name];
  const fromSchema = valueOf(op.body, hints);
  const valid = template ? fc.oneof(template, fromSchema) : fromSchema;
  const options: { weight: number; arbitrary: fc.Arbitrary<BodyChoice> }[] = [
    { weight: 5, arbitrary: valid.map((value) => ({ body: { kind: "json" as const, value }, label: null })) },
    {
      weight: 3,
      arbitrary: mutatedBody(valid, op.body).map((m) => ({
        body: { kind: "json" as const, value: m.value },
        label: m.label,
      })),
    },
    { weight: 1, arbitrary: raw },
  ];
  if (!op.bodyRequired)
    options.push({
      weight: 1,
      arbitrary: fc.constant({ body: { kind: "none" as const }, label: "no body" }),
    });
  return fc.oneof(...options);
}

function headersOf(op: Operation) {
  const declares = (name: string) => op.parameters.some((p) => p.in === "header" && p.name === name);
  const idempotency = declares("Idempotency-Key")
    ? fc.oneof(
        { weight: 6, arbitrary: fc.constant("fresh") },
        { weight: 1, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: fc.constant("fuzz-reused-key") },
        { weight: 2, arbitrary: fc.constantFrom("", " ", "k".repeat(201), "é", "a\tb", "k".repeat(200)) },
      )
    : rarely(fc.constant("fresh")).map((v) => v ?? null);
  const ifMatch = declares("If-Match")
    ? fc.oneof(
        { weight: 4, arbitrary: fc.constant("current") },
        { weight: 2, arbitrary: fc.constant(null) },
        {
          weight: 2,
          arbitrary: fc.constantFrom(
            '"nope"',
            "*",
            'W/"1"',
            "",
            "garbage",
            '"a", "b"',
            `"${"e".repeat(300)}"`,
          ),
        },
      )
    : rarely(fc.constant('"stray"')).map((v) => v ?? null);
  // Each odd header now and then: most requests should get past the rails to the operation itself.
  const other = fc
    .record({
      "content-type": rarely(fc.constantFrom(...CONTENT_TYPES)),
      "service-request-id": rarely(
        fc.oneof(HEADER_TEXT, fc.constant("r".repeat(129)), fc.constant("req id with spaces")),
      ),
      accept: rarely(fc.constantFrom("text/html", "application/xml", "*/*", "application/problem+json")),
      "x-fuzz": rarely(
        fc.oneof(
          { weight: 9, arbitrary: HEADER_TEXT },
          { weight: 1, arbitrary: fc.constant("h".repeat(17_000)) },
        ),
      ),
    })
    .map((headers) => Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined)));
  return fc.record({ idempotency, ifMatch, other });
}

/** Every fuzz case of one operation. */
export function casesOf(
  op: Operation,
  world: World,
  hints: Hints,
  templates: Record<string, fc.Arbitrary<unknown>>,
): fc.Arbitrary<FuzzCase> {
  const names = op.parameters.filter((p) => p.in === "path").map((p) => p.name);
  const params = fc.record(Object.fromEntries(names.map((n) => [n, paramValue(world, n)])));
  const key = fc.oneof(
    { weight: 6, arbitrary: fc.constant<KeyKind>("live") },
    { weight: 2, arbitrary: fc.constant<KeyKind>("test") },
    { weight: 1, arbitrary: fc.constantFrom<KeyKind>("none", "other-account", "narrow", "malformed") },
  );
  return fc
    .record({
      key,
      malformed: fc.nat({ max: MALFORMED_AUTHORIZATIONS.length - 1 }),
      params,
      query: queryOf(op, hints),
      headers: headersOf(op),
      body: bodyOf(op, hints, templates),
      chunked: fc.oneof(
        { weight: 9, arbitrary: fc.constant(false) },
        { weight: 1, arbitrary: fc.constant(true) },
      ),
    })
    .map((r) => ({
      key: r.key,
      malformed: r.malformed,
      params: r.params as Record<string, string>,
      query: r.query.query,
      headers: r.headers.other as Record<string, string>,
      ifMatch: r.headers.ifMatch,
      idempotencyKey: r.headers.idempotency,
      body: r.body.body,
      chunked: r.chunked && r.body.body.kind !== "none",
      labels: [r.query.label, r.body.label].filter((l): l is string => l !== null),
    }));
}
