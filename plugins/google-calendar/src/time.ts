/**
 * @module plugins/google-calendar/src/time
 * Times as the tools take them: RFC 3339 date-times and all-day dates checked, local times
 * resolved in an IANA zone (through Intl, the only zone data the sandbox has), and the start/end
 * objects of an event built from them.
 */

export const DAY = 86400000;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})?$/;

/** A parsed start/end/timeMin/timeMax: a whole day, or an instant (with `offset` when it gave one). */
export type When =
  | { kind: 'date'; date: string; ms: number; y: number; mo: number; d: number }
  | { kind: 'dateTime'; dateTime: string; ms: number; offset: boolean };

/** One side of a Google event's time: a date (all day) or a date-time, with its zone. */
export interface EventTime {
  date?: string | null;
  dateTime?: string | null;
  timeZone?: string;
}

/** The canonical IANA name of a zone, or an Error naming the argument. */
export function checkZone(tz: string | undefined, arg = 'timeZone'): string | undefined {
  if (tz === undefined) return undefined;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    throw new Error(
      `${arg} "${tz}" is not a time zone: use an IANA name such as "Europe/Paris", "America/New_York" or "UTC".`,
    );
  }
}

/** Minutes east of UTC of a zone at an instant. */
function zoneOffset(tz: string, ms: number): number {
  const parts: Record<string, string> = {};
  const fmt = new Intl.DateTimeFormat('en-US', {
    timeZone: tz,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  for (const p of fmt.formatToParts(new Date(ms))) parts[p.type] = p.value;
  const asUtc = Date.UTC(
    Number(parts['year']),
    Number(parts['month']) - 1,
    Number(parts['day']),
    Number(parts['hour']) % 24,
    Number(parts['minute']),
    Number(parts['second']),
  );
  return Math.round((asUtc - Math.floor(ms / 1000) * 1000) / 60000);
}

/** The instant of a wall-clock time in a zone (the later reading in a DST overlap, shifted forward in a gap). */
function localInstant(y: number, mo: number, d: number, h: number, mi: number, s: number, tz: string): number {
  const guess = Date.UTC(y, mo - 1, d, h, mi, s);
  const first = guess - zoneOffset(tz, guess) * 60000;
  return guess - zoneOffset(tz, first) * 60000;
}

const validDay = (y: number, mo: number, d: number): boolean =>
  mo >= 1 && mo <= 12 && d >= 1 && d <= new Date(Date.UTC(y, mo, 0)).getUTCDate();

const pad = (n: number, w = 2): string => String(Math.abs(n)).padStart(w, '0');

/** A start/end/timeMin/timeMax argument: "YYYY-MM-DD" (a date) or an RFC 3339 date-time, with an offset or, without one, in `tz`. */
export function parseWhen(value: string, arg: string, tz: string | undefined): When {
  const v = String(value).trim();
  const dm = DATE_RE.exec(v);
  if (dm) {
    const [y, mo, d] = [Number(dm[1]), Number(dm[2]), Number(dm[3])];
    if (!validDay(y, mo, d)) throw new Error(`${arg} "${value}" is not a real date.`);
    return { kind: 'date', date: v, ms: tz ? localInstant(y, mo, d, 0, 0, 0, tz) : Date.UTC(y, mo - 1, d), y, mo, d };
  }
  const m = DATETIME_RE.exec(v);
  if (!m) {
    throw new Error(
      `${arg} "${value}" is not a date or time: use "YYYY-MM-DD" for a whole day, or RFC 3339 such as "2026-03-02T14:30:00+01:00", "2026-03-02T13:30:00Z", or "2026-03-02T14:30:00" together with timeZone.`,
    );
  }
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6] || '0'].map(Number);
  if (!validDay(y, mo, d) || h > 23 || mi > 59 || s > 59)
    throw new Error(`${arg} "${value}" is not a real date and time.`);
  const wall = `${pad(y, 4)}-${pad(mo)}-${pad(d)}T${pad(h)}:${pad(mi)}:${pad(s)}`;
  const off = m[8];
  if (off) {
    if (off !== 'Z' && off !== 'z' && (Number(off.slice(1, 3)) > 23 || Number(off.slice(4, 6)) > 59))
      throw new Error(`${arg} "${value}" has an impossible UTC offset.`);
    const offset = off === 'Z' || off === 'z' ? 'Z' : off;
    return { kind: 'dateTime', dateTime: `${wall}${offset}`, ms: Date.parse(`${wall}${offset}`), offset: true };
  }
  if (!tz)
    throw new Error(
      `${arg} "${value}" has no UTC offset: add one (e.g. "${wall}+01:00" or "${wall}Z") or give timeZone (e.g. "Europe/Paris").`,
    );
  return { kind: 'dateTime', dateTime: wall, ms: localInstant(y, mo, d, h, mi, s, tz), offset: false };
}

/** An instant as RFC 3339 in a zone ("2026-03-02T14:30:00+01:00"), or in UTC ("…Z"). */
export function formatInstant(ms: number, tz: string | undefined): string {
  const off = tz ? zoneOffset(tz, ms) : 0;
  const t = new Date(ms + off * 60000);
  const base = `${pad(t.getUTCFullYear(), 4)}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())}T${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())}:${pad(t.getUTCSeconds())}`;
  if (!tz || tz === 'UTC') return `${base}Z`;
  return `${base}${off < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
}

export const dateString = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** An RFC 3339 bound for events.list and freeBusy (an offset is mandatory there). */
export function bound(value: string, arg: string, tz: string | undefined): { ms: number; text: string } {
  const w = parseWhen(value, arg, tz);
  return { ms: w.ms, text: w.kind === 'dateTime' && w.offset ? w.dateTime : formatInstant(w.ms, tz) };
}

/** The Google start/end objects of an event from start, end and timeZone arguments, and their instants. */
export function eventTimes(
  startArg: string,
  endArg: string | undefined,
  tz: string | undefined,
): { start: EventTime; end: EventTime; ms: [number, number] } {
  const start = parseWhen(startArg, 'start', tz);
  if (start.kind === 'date') {
    let endDate: string;
    if (endArg === undefined) endDate = dateString(Date.UTC(start.y, start.mo - 1, start.d) + DAY);
    else {
      const end = parseWhen(endArg, 'end', tz);
      if (end.kind !== 'date')
        throw new Error(
          'start is a date (an all-day event) but end is a time: give both as "YYYY-MM-DD", or both as date-times.',
        );
      if (end.date <= start.date) {
        throw new Error(
          `end ${end.date} is not after start ${start.date}: for all-day events end is exclusive (the day after the last day); omit end for a one-day event.`,
        );
      }
      endDate = end.date;
    }
    return {
      start: { date: start.date },
      end: { date: endDate },
      ms: [Date.UTC(start.y, start.mo - 1, start.d), Date.parse(`${endDate}T00:00:00Z`)],
    };
  }
  if (endArg === undefined)
    throw new Error(
      'end is required for a timed event (start is a date-time); for an all-day event give start as "YYYY-MM-DD".',
    );
  const end = parseWhen(endArg, 'end', tz);
  if (end.kind !== 'dateTime')
    throw new Error(
      'start is a date-time but end is a date: give both as date-times, or both as "YYYY-MM-DD" for an all-day event.',
    );
  if (end.ms <= start.ms)
    throw new Error(`end ${endArg} is not after start ${startArg}: an event must end after it starts.`);
  const one = (w: { dateTime: string }): EventTime =>
    tz ? { dateTime: w.dateTime, timeZone: tz } : { dateTime: w.dateTime };
  return { start: one(start), end: one(end), ms: [start.ms, end.ms] };
}
