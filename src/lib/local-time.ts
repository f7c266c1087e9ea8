import { DateTime } from "luxon";
import { isIanaTimeZone } from "./time-zone.ts";

/** A date and time without a UTC offset, as people type it and `datetime-local` sends it. */
export const LOCAL_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/;

/** A local time read in a zone: the instant as ISO 8601 with its UTC offset, or why there is none. */
export type ZonedTime = { ok: true; iso: string } | { ok: false; detail: string };

const DAY_MS = 86_400_000;

/**
 * The instant `local` (`2026-11-29T10:00`, seconds optional) means in the IANA `zone`, as ISO 8601
 * with its UTC offset (`2026-11-29T10:00:00+01:00`). Clock changes: a time the zone skips (clocks
 * forward) does not exist and is refused, naming the change; a time it has twice (clocks back) is
 * the first of the two, the earlier instant (as RFC 5545 reads such a time).
 */
export function localTimeInZone(local: string, zone: string): ZonedTime {
  if (!LOCAL_DATE_TIME.test(local))
    return { ok: false, detail: `${local} is not a date and time like 2026-11-29T10:00` };
  if (!isIanaTimeZone(zone))
    return { ok: false, detail: `"${zone}" is not an IANA time zone such as Europe/Berlin` };
  // The wall-clock fields as if they were UTC; Luxon refuses dates that do not exist (2027-02-30).
  const wall = DateTime.fromISO(local, { zone: "utc" });
  if (!wall.isValid) return { ok: false, detail: `${local} is not a date that exists` };
  const wallMs = wall.toMillis();
  const offsetAt = (ms: number) => DateTime.fromMillis(ms, { zone }).offset;
  // Zones change their offset at most once within a day around any time: the candidates are the
  // offsets before and after, and an instant is the local time when the zone's offset then agrees.
  const before = offsetAt(wallMs - DAY_MS);
  const after = offsetAt(wallMs + DAY_MS);
  const instants = [...new Set([before, after, offsetAt(wallMs)])]
    .map((offset) => wallMs - offset * 60_000)
    .filter((ms) => offsetAt(ms) * 60_000 === wallMs - ms)
    .sort((a, b) => a - b);
  if (instants.length === 0)
    return {
      ok: false,
      detail:
        `${local} does not exist in ${zone}: the clocks move forward from ${offsetText(before)} to ` +
        `${offsetText(after)} that day`,
    };
  const iso = DateTime.fromMillis(instants[0]!, { zone }).toISO({ suppressMilliseconds: true })!;
  return { ok: true, iso };
}

/** Minutes east of UTC as `+01:00`. */
function offsetText(minutes: number): string {
  const sign = minutes < 0 ? "-" : "+";
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}
