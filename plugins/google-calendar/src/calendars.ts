/**
 * @module plugins/google-calendar/src/calendars
 * Calendars as a whole: the user's calendar list, and free/busy times across several people's
 * calendars with the slots when all of them are free.
 */
import { defineTool, reads, z } from 'workbench/plugin-sdk';
import { gcal, SCOPES } from './api.js';
import { cursor, timeZone } from './schema.js';
import { normEmail } from './shape.js';
import { bound, checkZone, formatInstant } from './time.js';

export const listCalendars = defineTool({
  description:
    "List the Google calendars the user has in their calendar list (their own, shared and subscribed calendars) with id, name, whether it is the primary one, the user's access role and its time zone. Use it to find the calendarId of a team or shared calendar; most other calendar tools default to the primary calendar.",
  input: z.object({
    minAccessRole: z
      .enum(['freeBusyReader', 'reader', 'writer', 'owner'])
      .optional()
      .describe('Only calendars where the user has at least this role (writer: calendars the user can add events to).'),
    maxResults: z.int().min(1).max(250).default(100).describe('Calendars per page.'),
    cursor,
  }),
  annotations: reads('List calendars'),
  handler: async (ctx, args) => {
    type Calendar = {
      id: string;
      summary?: string;
      summaryOverride?: string;
      primary?: boolean;
      accessRole?: string;
      timeZone?: string;
      description?: string;
    };
    const data = await gcal.json<{ items?: Calendar[]; nextPageToken?: string }>(ctx, 'GET', '/users/me/calendarList', {
      query: { maxResults: args.maxResults ?? 100, pageToken: args.cursor, minAccessRole: args.minAccessRole },
      action: 'list your calendars',
      scope: SCOPES.calendars,
    });
    const calendars = (Array.isArray(data.items) ? data.items : []).map((c) => ({
      id: c.id,
      summary: c.summaryOverride || c.summary || c.id,
      primary: Boolean(c.primary),
      accessRole: c.accessRole ?? null,
      timeZone: c.timeZone ?? null,
      description: c.description ?? null,
    }));
    return { calendars, next: data.nextPageToken || null };
  },
});

/** Gaps of at least `minMs` inside [from, to) not covered by any busy interval. */
function freeSlots(busy: Array<[number, number]>, from: number, to: number, minMs: number): Array<[number, number]> {
  const spans = busy
    .map(([s, e]): [number, number] => [Math.max(from, s), Math.min(to, e)])
    .filter(([s, e]) => e > s)
    .sort((a, b) => a[0] - b[0]);
  const out: Array<[number, number]> = [];
  let at = from;
  for (const [s, e] of spans) {
    if (s - at >= minMs) out.push([at, s]);
    at = Math.max(at, e);
  }
  if (to - at >= minMs) out.push([at, to]);
  return out;
}

export const findFreeBusy = defineTool({
  description:
    "Availability (is someone free or busy, when can we meet): the busy times of several people's calendars (by email) over a time window, and the slots in it when all of them are free (commonFree, at least minFreeMinutes long). Use it to find a meeting time before calendar_create_event. Times are RFC 3339 with an offset, or dates/local times with timeZone; the free slots are given in timeZone (UTC by default). People whose calendar is not shared with the user are reported with an error.",
  input: z.object({
    calendars: z
      .array(z.string().min(1).max(254))
      .min(1)
      .max(50)
      .describe('Email addresses or calendar ids ("primary" for the user).'),
    timeMin: z.string().max(40).describe('Start of the window.'),
    timeMax: z.string().max(40).describe('End of the window.'),
    timeZone: timeZone('IANA zone for dates and local times given, and for the times returned.'),
    minFreeMinutes: z.int().min(5).max(1440).default(30).describe('Shortest free slot reported in commonFree.'),
  }),
  annotations: reads('Find free/busy times'),
  handler: async (ctx, args) => {
    type Busy = { busy?: Array<{ start: string; end: string }>; errors?: Array<{ reason?: string }> };
    const tz = checkZone(args.timeZone);
    const min = bound(args.timeMin, 'timeMin', tz);
    const max = bound(args.timeMax, 'timeMax', tz);
    if (max.ms <= min.ms)
      throw new Error(`timeMax ${args.timeMax} is not after timeMin ${args.timeMin}: the window is empty.`);
    const ids = [...new Set(args.calendars.map((c) => (c === 'primary' ? c : normEmail(c))))];
    const data = await gcal.json<{ calendars?: Record<string, Busy> }>(ctx, 'POST', '/freeBusy', {
      body: { timeMin: min.text, timeMax: max.text, ...(tz ? { timeZone: tz } : {}), items: ids.map((id) => ({ id })) },
      action: 'check free/busy times',
      scope: SCOPES.freebusy,
    });
    const got = data.calendars || {};
    const allBusy: Array<[number, number]> = [];
    const calendars = ids.map((id) => {
      // Google may answer under the address as given rather than lower-cased
      const c = got[id] || got[Object.keys(got).find((k) => normEmail(k) === id) ?? ''] || {};
      const busy = (Array.isArray(c.busy) ? c.busy : []).map((b) => ({ start: b.start, end: b.end }));
      for (const b of busy) allBusy.push([Date.parse(b.start), Date.parse(b.end)]);
      const errors = (Array.isArray(c.errors) ? c.errors : []).map((e) => e.reason).filter(Boolean);
      return errors.length ? { id, busy, error: errors.join(', ') } : { id, busy };
    });
    const minMs = (args.minFreeMinutes ?? 30) * 60000;
    const commonFree = freeSlots(allBusy, min.ms, max.ms, minMs).map(([s, e]) => ({
      start: formatInstant(s, tz),
      end: formatInstant(e, tz),
    }));
    const unknown = calendars.filter((c) => 'error' in c).map((c) => c.id);
    return {
      timeMin: min.text,
      timeMax: max.text,
      calendars,
      commonFree,
      ...(unknown.length
        ? {
            note: `No free/busy information for ${unknown.join(', ')} (not shared with you, or not a Google calendar): commonFree ignores them.`,
          }
        : {}),
    };
  },
});
