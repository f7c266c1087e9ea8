import type { TSchema } from "@sinclair/typebox";
import type { Herald } from "../../herald.ts";
import type { ProviderAdapter } from "../../providers/types.ts";

// The per-network fields of the compose form, read from each adapter's `optionsSchema` (its titles and
// help texts: src/providers/options.ts says which keywords mean what). Only the networks of the chosen
// destinations are shown.

/** One option field of a network (`destination_options.<channel>.<key>`). */
export type OptionField =
  | { kind: "select"; key: string; label: string; choices: string[][]; hint?: string }
  | { kind: "yesno"; key: string; label: string; hint?: string }
  | { kind: "flag"; key: string; label: string }
  | { kind: "flags"; key: string; label: string; choices: string[] }
  | { kind: "text"; key: string; label: string; hint?: string; list?: boolean; integer?: boolean };

/** The options a network's adapter accepts (its `optionsSchema`), and whether it takes alt text. */
export interface NetworkOptions {
  channel: string;
  name: string;
  altText: boolean;
  hint?: string;
  fields: OptionField[];
}

/** The option that carries alt texts; the form asks for one per attached asset instead of a field. */
const ALT_TEXT = "alt_text_by_asset_id";

/** A choice's label: its `title`, else the value in plain words (`accounts_you_follow` → "accounts you follow"). */
const choiceLabel = (literal: TSchema) =>
  (literal.title as string | undefined) ?? String(literal.const).replaceAll("_", " ").toLowerCase();

/** The form field of one property, by the kind of its schema (null: nothing a person types). */
export function optionField(key: string, schema: TSchema): OptionField | null {
  const label = (schema.title as string | undefined) ?? key;
  const hint = (schema.description as string | undefined) ?? undefined;
  const withHint = hint === undefined ? {} : { hint };
  if (Array.isArray(schema.anyOf) && schema.anyOf.every((s: TSchema) => s.const !== undefined))
    return {
      kind: "select",
      key,
      label,
      choices: schema.anyOf.map((s: TSchema) => [String(s.const), choiceLabel(s)]),
      ...withHint,
    };
  if (schema.type === "boolean")
    return schema.default === false
      ? { kind: "flag", key, label }
      : { kind: "yesno", key, label, ...withHint };
  if (schema.type === "array" && schema.items?.type === "string") {
    const choices = schema.items.examples as string[] | undefined;
    if (choices) return { kind: "flags", key, label, choices };
    return { kind: "text", key, label, list: true, ...withHint };
  }
  if (schema.type === "integer") return { kind: "text", key, label, integer: true, ...withHint };
  if (schema.type === "string") return { kind: "text", key, label, ...withHint };
  return null;
}

/** What the compose form offers for a network: null when it takes no options. */
export function networkOptions(adapter: ProviderAdapter): NetworkOptions | null {
  const schema = adapter.optionsSchema;
  if (!schema) return null;
  const properties = (schema.properties ?? {}) as Record<string, TSchema>;
  const fields = Object.entries(properties).flatMap(([key, property]) => {
    if (key === ALT_TEXT) return [];
    const field = optionField(key, property);
    return field ? [field] : [];
  });
  const hint = schema.description as string | undefined;
  return {
    channel: adapter.channel,
    name: adapter.displayName,
    altText: ALT_TEXT in properties,
    ...(hint === undefined ? {} : { hint }),
    fields,
  };
}

/** The compose options of a channel of the registry Herald was built with. */
export function composeOptions(h: Herald, channel: string): NetworkOptions | null {
  const adapter = h.providers.adapter(channel);
  return adapter ? networkOptions(adapter) : null;
}
