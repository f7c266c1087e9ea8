import { t } from "elysia";

/** The schemas every route file shares. */

/** A value or null. */
export const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(schema: T) =>
  t.Union([schema, t.Null()]);

/** An object that refuses properties it does not list. */
export const Closed = <P extends Parameters<typeof t.Object>[0]>(
  properties: P,
  options: { title?: string; minProperties?: number; examples?: Record<string, unknown>[] } = {},
) => t.Object(properties, { additionalProperties: false, ...options });

/** The path of every route under /workspaces/{workspace_id}. */
export const WorkspaceParams = t.Object({ workspace_id: t.String() });

/** `webhook_endpoint` → `WebhookEndpoint`: a schema name made of an `object` value. */
export const pascalCase = (snake: string) =>
  snake.replace(/(^|_)([a-z])/g, (_, _sep: string, letter: string) => letter.toUpperCase());

/** The answer of a DELETE: `{id, object, deleted: true}`, named `Deleted<Object>`. */
export const Deleted = <O extends string>(object: O) =>
  t.Object(
    { id: t.String(), object: t.Literal(object), deleted: t.Literal(true) },
    { title: `Deleted${pascalCase(object)}` },
  );

/** Query of a paged listing: the page size and the cursor. */
export const PageQuery = t.Object({ limit: t.Optional(t.String()), after: t.Optional(t.String()) });

/** A body that carries nothing: `{}` or no body at all. */
export const EmptyBody = t.Optional(Closed({}, { title: "EmptyRequest", examples: [{}] }));

/** The contract's "Confirmed action": `{confirmed: true}`, required (missing or false is a 400 at /confirmed). */
export const ConfirmedBody = Closed(
  { confirmed: t.Literal(true) },
  { title: "ConfirmedActionRequest", examples: [{ confirmed: true }] },
);

/** A body that may carry the Confirmed action's `{confirmed: true}`, or be `{}` or absent. */
export const OptionallyConfirmedBody = t.Optional(
  Closed(
    { confirmed: t.Optional(t.Literal(true)) },
    { title: "OptionallyConfirmedActionRequest", examples: [{ confirmed: true }] },
  ),
);
