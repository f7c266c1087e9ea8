// Example Social: a network that lives outside src/providers, registered by a test. Everything Herald
// needs of a network is here: rules with the options people see, default origins, the connection kind,
// connecting, publishing and numbers.
import { Type } from "@sinclair/typebox";
import { expectJson, providerFetch, responseDetails } from "../../src/providers/http.ts";
import type { NetworkDefinition } from "../../src/providers/registry.ts";
import {
  ProviderError,
  type ChannelLimits,
  type CheckItemInput,
  type DestinationRef,
  type ItemProblem,
  type MetricsResult,
  type NetworkRules,
  type PasswordAdapter,
  type ProviderDeps,
} from "../../src/providers/types.ts";

const LIMITS: ChannelLimits = { maxCharacters: 280, maxImages: 2, maxVideos: 0, maxImageBytes: 2_000_000 };

/** Example Social's rules: its options (with the words the compose form shows) and its limits. */
export const EXAMPLE_RULES: NetworkRules = {
  channel: "example",
  displayName: "Example Social",
  defaultLimits: LIMITS,
  optionsSchema: Type.Object(
    {
      audience: Type.Optional(
        Type.Union(
          [
            Type.Literal("everyone", { title: "Everyone" }),
            Type.Literal("followers", { title: "Followers only" }),
          ],
          { title: "Audience" },
        ),
      ),
      sensitive: Type.Optional(Type.Boolean({ title: "Mark as sensitive", default: false })),
      topic: Type.Optional(
        Type.String({ maxLength: 40, title: "Topic", description: "One word the post is filed under." }),
      ),
      alt_text_by_asset_id: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 500 }))),
    },
    { additionalProperties: false, description: "Example Social shows the first image large." },
  ),
  checkItem: checkExampleItem,
  supportsThreads: true,
  dailyCap: null,
  monthlyPostLimit: null,
};

function checkExampleItem({ text, media, limits }: CheckItemInput): ItemProblem[] {
  const problems: ItemProblem[] = [];
  if ([...text].length > limits.maxCharacters)
    problems.push({ pointer: "", detail: `is over ${limits.maxCharacters} characters` });
  if (media.length > limits.maxImages)
    problems.push({ pointer: "/media", detail: `has more than ${limits.maxImages} images` });
  media.forEach((m, i) => {
    if (!m.contentType.startsWith("image/"))
      problems.push({ pointer: `/media/${i}`, detail: "Example Social takes images only" });
  });
  return problems;
}

/** Example Social says when a throttled client may call again in seconds (Retry-After). */
const retryAfter =
  (deps: ProviderDeps) =>
  (headers: Headers): number | null => {
    const seconds = Number(headers.get("retry-after"));
    return Number.isFinite(seconds) && seconds > 0 ? deps.clock.now() + seconds * 1000 : null;
  };

/** One call to Example Social: 401 means the app password was revoked, another 4xx a refusal. */
async function call(
  deps: ProviderDeps,
  operation: string,
  url: string,
  init: RequestInit,
  idempotent: boolean,
): Promise<Record<string, any>> {
  const response = await providerFetch({ deps, operation, url, init, idempotent, retryAt: retryAfter(deps) });
  if (response.status === 401)
    throw new ProviderError(
      "auth_revoked",
      `${operation}: not signed in`,
      responseDetails({ operation, response }),
    );
  if (!response.ok)
    throw new ProviderError(
      "rejected",
      `${operation}: ${response.status}`,
      responseDetails({ operation, response }),
    );
  return expectJson({ operation, response });
}

function createExampleAdapter(deps: ProviderDeps): PasswordAdapter {
  const token = (d: DestinationRef) => ({ authorization: `Bearer ${d.credentials.token as string}` });
  return {
    ...EXAMPLE_RULES,
    checkItem: checkExampleItem,
    connection: {
      kind: "password",
      defaultOrigin: "https://social.example",
      form: {
        handleHint: "Like ada.example.",
        passwordHint: "Create one under Settings, App passwords.",
        origin: { label: "Server", inSentence: "server", hint: "Only for an account on another server." },
      },
    },
    idempotentCreate: true,
    pendingChecksRepeatable: false,
    refreshAheadMs: null,
    metricsBatchSize: 1,
    async connectWithPassword({ origin, identifier, password }) {
      const body = await call(
        deps,
        "POST /v1/session",
        `${origin}/v1/session`,
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ handle: identifier, password }),
        },
        true,
      );
      return {
        externalId: body.account_id,
        handle: body.handle,
        displayName: body.name,
        profileImageUrl: null,
        credentials: { token: body.token },
        limits: LIMITS,
      };
    },
    async publishItem(input) {
      const { destination: d } = input;
      const alt = (input.options.alt_text_by_asset_id ?? {}) as Record<string, string>;
      const mediaIds: string[] = [];
      for (const m of input.media) {
        const uploaded = await call(
          deps,
          "POST /v1/media",
          `${d.origin}/v1/media`,
          {
            method: "POST",
            headers: { ...token(d), "content-type": m.contentType, "x-alt-text": alt[m.assetId] ?? "" },
            body: await m.read(),
          },
          true,
        );
        mediaIds.push(uploaded.id);
      }
      const { alt_text_by_asset_id: _, ...options } = input.options;
      const operation = "POST /v1/posts";
      const created = await call(
        deps,
        operation,
        `${d.origin}/v1/posts`,
        {
          method: "POST",
          headers: {
            ...token(d),
            "content-type": "application/json",
            "idempotency-key": input.idempotencyKey,
          },
          body: JSON.stringify({
            text: input.text,
            mediaIds,
            replyTo: input.parent?.providerObjectId ?? null,
            options,
          }),
        },
        true,
      );
      return {
        providerObjectId: created.id,
        url: created.url,
        extra: {},
        provider: { operation, requestId: null, statusCode: 201 },
      };
    },
    async fetchMetrics({ destination, targets }): Promise<MetricsResult[]> {
      const results: MetricsResult[] = [];
      for (const target of targets) {
        const id = target.providerObjectId;
        const stats = await call(
          deps,
          "GET /v1/posts/{id}/stats",
          `${destination.origin}/v1/posts/${id}/stats`,
          { headers: token(destination) },
          true,
        );
        results.push({
          providerObjectId: id,
          kind: "metrics",
          values: { views: stats.views, reactions: stats.likes, comments: stats.replies },
          providerAsOf: null,
        });
      }
      return results;
    },
    async refreshCredentials() {
      // App passwords do not expire; a refused one needs the person to connect again.
      throw new ProviderError("auth_revoked", "Example Social sessions are not renewed", {
        operation: "refresh",
      });
    },
  };
}

/** What a registry takes: Example Social's rules, default origins and adapter. */
export const EXAMPLE_NETWORK: NetworkDefinition = {
  rules: EXAMPLE_RULES,
  origins: { api: "https://social.example", auth: "https://social.example" },
  create: createExampleAdapter,
};
