import type { BlobStore } from "./blobs/store.ts";
import type { Config } from "./config.ts";
import type { Db } from "./db/open.ts";
import type { Clock } from "./lib/clock.ts";
import type { SecretBox } from "./lib/crypto.ts";
import type { Logger } from "./lib/logger.ts";
import type { MailTransport } from "./modules/mail/transport.ts";
import type { ProviderRegistry } from "./providers/registry.ts";

/** The one value every part of the server receives (PocketBase's `App`): no globals elsewhere. */
export interface Herald {
  config: Config;
  db: Db;
  clock: Clock;
  logger: Logger;
  secrets: SecretBox;
  /** Null when HERALD_SMTP_URL is unset: mail then waits in the outbox. */
  mail: MailTransport | null;
  /** The network adapters. */
  providers: ProviderRegistry;
  /** Media bytes: local disk under the data dir, or the S3 bucket (HERALD_STORAGE). */
  blobs: BlobStore;
  version: string;
}

/** Where the human-readable docs live; problem `type` URLs point here. */
export function docsUrl(h: Herald): string {
  return `${h.config.baseUrl}/v1/docs`;
}

/** Herald's version, shown in /health, the OpenAPI document and User-Agent headers. */
export const HERALD_VERSION = "0.1.0";
