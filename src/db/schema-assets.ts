// Tables of the assets capability (uploads, parts); the `assets` table itself is in schema.ts.
export {};
