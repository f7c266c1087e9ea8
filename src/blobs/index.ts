import { join } from "node:path";
import type { Config } from "../config.ts";
import { LocalBlobStore } from "./local.ts";
import { S3BlobStore } from "./s3.ts";
import type { BlobStore } from "./store.ts";

/** The storage interface, re-exported for callers that only pick a store. */
export type { BlobStore } from "./store.ts";

/** The one place that picks the storage backend: HERALD_STORAGE=local (default) or s3. */
export function createBlobStore(config: Config): BlobStore {
  if (config.storage === "s3") {
    const { endpoint, bucket, accessKey, secretKey, region } = config.s3;
    // loadConfig already refused s3 without these.
    return new S3BlobStore({
      endpoint: endpoint!,
      bucket: bucket!,
      accessKey: accessKey!,
      secretKey: secretKey!,
      region,
    });
  }
  return new LocalBlobStore(join(config.dataDir, "blobs"));
}
