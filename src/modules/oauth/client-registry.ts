import type { Herald } from "../../herald.ts";
import { newId } from "../../db/ids.ts";
import { inTransaction } from "../../db/transaction.ts";
import { boundedText } from "../../lib/bounded-body.ts";
import { createGuardedFetch } from "../../lib/guarded-fetch.ts";
import { checkClientMetadata, clientInformation } from "./clients.ts";
import { OauthError } from "./errors.ts";
import { findOauthClient, insertOauthClient, type OauthClientRow, saveMetadataClient } from "./repo.ts";

/** How long a client ID metadata document is believed before it is read again. */
export const METADATA_DOCUMENT_TTL_MS = 60 * 60 * 1000;
const METADATA_DOCUMENT_MAX_BYTES = 5 * 1024;
const METADATA_DOCUMENT_TIMEOUT_MS = 5_000;

/** Registers a public client (RFC 7591) and answers its client information (201). */
export async function registerClient(h: Herald, body: unknown) {
  const metadata = checkClientMetadata(body);
  const row: OauthClientRow = {
    id: newId("hoc"),
    ...metadata,
    source: "registered",
    createdAt: h.clock.now(),
    fetchedAt: null,
  };
  await inTransaction(h.db, (tx) => insertOauthClient(tx, row));
  return clientInformation(row);
}

/**
 * The client a `client_id` names: a registered one (`hoc_…`), or, when the id is an https URL, the
 * client its metadata document describes (read through the SSRF guard, kept for an hour). Null when
 * there is none or the document cannot be read or is not valid.
 */
export async function resolveClient(h: Herald, clientId: string): Promise<OauthClientRow | null> {
  if (!metadataDocumentUrl(h, clientId)) return (await findOauthClient(h.db, clientId)) ?? null;
  const known = await findOauthClient(h.db, clientId);
  const now = h.clock.now();
  if (known?.fetchedAt != null && known.fetchedAt + METADATA_DOCUMENT_TTL_MS > now) return known;
  const document = await readMetadataDocument(h, clientId).catch(() => null);
  if (!document) return null;
  const row: OauthClientRow = {
    id: clientId,
    ...document,
    source: "metadata_document",
    createdAt: known?.createdAt ?? now,
    fetchedAt: now,
  };
  await inTransaction(h.db, (tx) => saveMetadataClient(tx, row));
  return row;
}

/**
 * Whether a client id is a metadata document's URL: https with a path (draft-ietf-oauth-client-id-
 * metadata-document), or loopback http while HERALD_DEV_ALLOW_PRIVATE_NETWORK is on (tests).
 */
function metadataDocumentUrl(h: Herald, clientId: string): boolean {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return false;
  }
  const devLoopback = url.protocol === "http:" && h.config.devAllowPrivateNetwork;
  return (url.protocol === "https:" || devLoopback) && url.pathname !== "/" && !url.hash;
}

/** Reads and checks a client ID metadata document; its `client_id` must be its own URL. */
async function readMetadataDocument(h: Herald, url: string) {
  const guarded = createGuardedFetch({ allowPrivateNetwork: h.config.devAllowPrivateNetwork });
  const response = await guarded(url, {
    headers: { accept: "application/json" },
    signal: AbortSignal.timeout(METADATA_DOCUMENT_TIMEOUT_MS),
  });
  if (response.status !== 200)
    throw new OauthError("invalid_client", `metadata document: ${response.status}`);
  const text = await boundedText(response, METADATA_DOCUMENT_MAX_BYTES);
  if (text === null) throw new OauthError("invalid_client", "document too large");
  const body = JSON.parse(text) as Record<string, unknown>;
  if (body?.client_id !== url) throw new OauthError("invalid_client", "client_id is not the document's URL");
  return checkClientMetadata(body);
}
