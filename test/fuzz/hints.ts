// Values for request fields by name: real ids of the world, times around the server's clock (the
// test server's clock is 2026-03-01T12:00Z), origins that stay on this machine.
import fc from "fast-check";
import type { Hints } from "./arbitraries.ts";
import type { World } from "./world.ts";

const ISO = (from: string, to: string) =>
  fc.integer({ min: Date.parse(from), max: Date.parse(to) }).map((ms) => new Date(ms).toISOString());
const LOCAL_DATE = fc
  .integer({ min: Date.parse("2025-12-01"), max: Date.parse("2026-06-01") })
  .map((ms) => new Date(ms).toISOString().slice(0, 10));

/** Values for fields by name: real ids, times around the server's clock, the fakes' origins. */
export function hintsFor(world: World): Hints {
  const pool = (name: string) => fc.constantFrom(...world.pools[name]!);
  const hint = (arbitrary: fc.Arbitrary<unknown>, only = false, present = false) => ({
    arbitrary,
    only,
    present,
  });
  const origins = [world.mastodon.origin, world.bluesky.origin, "https://social.invalid", "http://10.0.0.1"];
  return {
    destination_id: hint(pool("destination_id")),
    destination_ids: hint(pool("destination_id")),
    asset_id: hint(pool("asset_id")),
    media: hint(pool("asset_id")),
    id: hint(pool("post_id")),
    confirmed: hint(fc.constant(true)),
    group: hint(fc.constantFrom(...world.pools.group!, "g-new")),
    handle: hint(fc.constantFrom("alice.test", "bob.test", "nobody.test")),
    app_password: hint(fc.constantFrom("alice-app-pass", "wrong-pass")),
    // Herald dials these at once: only the loopback fakes, or what is refused before any lookup. Without
    // an instance_origin, Bluesky would be reached at bsky.social: it is always sent.
    instance_origin: hint(
      fc.constantFrom(...origins, "not a url", "ftp://x.invalid", `${origins[0]}/path`),
      true,
      true,
    ),
    // Webhook hosts go to the stub resolver of world.ts: hooks.example.com does not resolve (503).
    url: hint(
      fc.constantFrom(
        world.receiver.url,
        "https://hooks.invalid/x",
        "https://hooks.example.com/x",
        "http://10.0.0.1/",
        "nope",
      ),
      true,
    ),
    when: hint(fc.oneof(fc.constantFrom("now", "draft", "queue", "later"), ISO("2026-02-01", "2026-05-01"))),
    scheduled_at: hint(ISO("2026-02-01", "2026-05-01")),
    expected_scheduled_at: hint(ISO("2026-02-01", "2026-05-01")),
    created_after: hint(ISO("2026-02-01", "2026-05-01")),
    scheduled_before: hint(ISO("2026-02-01", "2026-05-01")),
    time_zone: hint(fc.constantFrom("UTC", "Europe/Paris", "America/New_York", "Mars/Olympus", "+02:00")),
    local_date: hint(LOCAL_DATE),
    from: hint(LOCAL_DATE),
    until: hint(LOCAL_DATE),
    bucket: hint(fc.constantFrom("day", "week", "month")),
    limit: hint(fc.constantFrom("1", "25", "100", "0", "101", "-1", "abc", "2.5", "1e2", "")),
    after: hint(fc.constantFrom("", "bogus", "eyJ4IjoxfQ", "a".repeat(500))),
    email: hint(fc.constantFrom("fuzz@example.com", "not-an-email", "a@b", `${"x".repeat(250)}@e.io`)),
    checksum_crc64nvme: hint(fc.constantFrom("rosUhgp5mIg=", "AAAAAAAAAAA=", "!!", "")),
  };
}
