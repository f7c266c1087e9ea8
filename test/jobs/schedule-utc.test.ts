import { afterEach, expect, test } from "bun:test";
import { scheduleOf } from "../../src/jobs/scheduler.ts";

// Job patterns are read in UTC whatever the machine's zone (no local zone is loaded: less idle
// memory), so an hourly job at minute 41 runs at minute 41 of UTC's hour, also in a zone whose offset
// is not whole hours.
const zone = process.env.TZ;
afterEach(() => {
  if (zone === undefined) delete process.env.TZ;
  else process.env.TZ = zone;
});

test("a job's pattern is read in UTC, not in the machine's time zone", () => {
  process.env.TZ = "Asia/Kolkata";
  const hourly = scheduleOf("0 41 * * * *", { paused: true });
  expect(hourly.nextRun(new Date("2026-01-01T00:00:00Z"))?.toISOString()).toBe("2026-01-01T00:41:00.000Z");
  const daily = scheduleOf("0 0 3 * * *", { paused: true });
  expect(daily.nextRun(new Date("2026-01-01T00:00:00Z"))?.toISOString()).toBe("2026-01-01T03:00:00.000Z");
});
