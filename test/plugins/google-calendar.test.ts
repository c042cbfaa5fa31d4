/**
 * @module test/plugins/google-calendar.test
 * Every Google Calendar tool runs through the real gateway and sandbox against a loopback stand-in
 * for www.googleapis.com (reached through the policy's origin mapping): the request each tool makes
 * (method, /calendar/v3 path, query, JSON body, Bearer token) and its slim result come from one
 * table. Then the time handling (local times and dates resolved in an IANA zone across DST, a moved
 * start keeping the duration, all-day ↔ timed), the free-slot computation, the error mappings
 * (401, 403 scopes vs 403 rate limits vs organizer-only, 404, 409, 410, 429) and bad inputs refused
 * before any request (end before start, unknown zone, no offset, impossible dates).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.js';
import { usePluginGateway } from '../helpers/plugin-gateway.js';
import { toolCalls } from '../helpers/tool-calls.js';
import { routeUpstream, type RouteReply } from '../helpers/upstream-routes.js';
import type { Upstream, UpstreamReply } from '../helpers/upstream.js';

const TOKEN = 'ya29.calendar-access-token-0123456789';
const BASE = '/calendar/v3';
type Gateway = TestGateway;
let upstream: Upstream;
let gw: Gateway;

usePluginGateway(
  'google-calendar',
  { token: TOKEN, refreshToken: 'refresh-1', expiresInSec: 3600 },
  (s) => ({ upstream, gw } = s),
);

/** Answers "METHOD /path" (path under /calendar/v3, as received: encoded). */
const route = (replies: Record<string, RouteReply>): void =>
  routeUpstream(upstream, replies, {
    base: BASE,
    notFound: (m, path) => ({
      error: { code: 404, message: `no route ${m} ${path}`, errors: [{ reason: 'notFound' }] },
    }),
  });

type Call = [method: string, path: string, query?: Record<string, string>, body?: unknown];

function assertCalls(calls: Call[]): void {
  const reqs = upstream.requests;
  assert.equal(reqs.length, calls.length, `requests: ${reqs.map((r) => `${r.method} ${r.url}`).join(', ')}`);
  calls.forEach(([method, path, query, body], i) => {
    const req = reqs[i]!;
    assert.equal(req.headers.authorization, `Bearer ${TOKEN}`, `request ${i} carries the user's token`);
    assert.equal(req.method, method, `request ${i} method`);
    assert.equal(req.path, `${BASE}${path}`, `request ${i} path`);
    assert.deepEqual(Object.fromEntries(req.query), query ?? {}, `request ${i} query`);
    if (body === undefined) assert.equal(req.body, '', `request ${i} has no body`);
    else {
      assert.match(String(req.headers['content-type']), /^application\/json/);
      assert.deepEqual(req.json, body, `request ${i} JSON body`);
    }
  });
}

const { ok, fails } = toolCalls(() => gw, [TOKEN]);

// ---------- fixtures ----------

const RAW_EVENT = {
  kind: 'calendar#event',
  etag: '"1"',
  id: 'ev1',
  status: 'confirmed',
  htmlLink: 'https://www.google.com/calendar/event?eid=ev1',
  created: '2026-02-01T10:00:00.000Z',
  updated: '2026-02-02T10:00:00.000Z',
  summary: 'Design review',
  description: 'Agenda:\n1. specs',
  location: 'Room 4',
  creator: { email: 'me@example.com', self: true },
  organizer: { email: 'me@example.com', self: true },
  start: { dateTime: '2026-03-02T14:00:00+01:00', timeZone: 'Europe/Paris' },
  end: { dateTime: '2026-03-02T15:00:00+01:00', timeZone: 'Europe/Paris' },
  iCalUID: 'ev1@google.com',
  sequence: 0,
  hangoutLink: 'https://meet.google.com/abc-defg-hij',
  attendees: [
    { email: 'me@example.com', organizer: true, self: true, responseStatus: 'accepted' },
    { email: 'bob@example.com', displayName: 'Bob', responseStatus: 'tentative', optional: true },
  ],
  conferenceData: {
    entryPoints: [
      { entryPointType: 'video', uri: 'https://meet.google.com/abc-defg-hij', label: 'meet.google.com/abc-defg-hij' },
    ],
    conferenceSolution: { key: { type: 'hangoutsMeet' }, name: 'Google Meet' },
    conferenceId: 'abc-defg-hij',
  },
  reminders: { useDefault: true },
};
const SLIM_EVENT = {
  id: 'ev1',
  summary: 'Design review',
  start: '2026-03-02T14:00:00+01:00',
  end: '2026-03-02T15:00:00+01:00',
  allDay: false,
  location: 'Room 4',
  status: 'confirmed',
  organizer: 'me@example.com',
  attendeeCount: 2,
  meetLink: 'https://meet.google.com/abc-defg-hij',
  recurringEventId: null,
  htmlLink: 'https://www.google.com/calendar/event?eid=ev1',
};
const ALL_DAY = {
  id: 'ev2',
  summary: 'Offsite',
  status: 'confirmed',
  start: { date: '2026-03-05' },
  end: { date: '2026-03-07' },
  organizer: { email: 'team@group.calendar.google.com' },
  recurringEventId: 'ser1',
};
const SLIM_ALL_DAY = {
  id: 'ev2',
  summary: 'Offsite',
  start: '2026-03-05',
  end: '2026-03-07',
  allDay: true,
  location: null,
  status: 'confirmed',
  organizer: 'team@group.calendar.google.com',
  attendeeCount: 0,
  meetLink: null,
  recurringEventId: 'ser1',
  htmlLink: null,
};
const SAVED = {
  id: 'ev1',
  summary: 'Design review',
  start: '2026-03-02T14:00:00+01:00',
  end: '2026-03-02T15:00:00+01:00',
  attendees: ['me@example.com', 'bob@example.com'],
  meetLink: 'https://meet.google.com/abc-defg-hij',
  conferenceStatus: null,
  htmlLink: RAW_EVENT.htmlLink,
};
const NO_CONTENT: UpstreamReply = { status: 204 };

// ---------- the table ----------

interface Case {
  name?: string;
  tool: string;
  args: Record<string, unknown>;
  replies: Record<string, RouteReply>;
  calls: Call[];
  result: unknown;
}

const CASES: Case[] = [
  {
    tool: 'calendar_list_calendars',
    args: { minAccessRole: 'writer', maxResults: 2 },
    replies: {
      'GET /users/me/calendarList': {
        json: {
          kind: 'calendar#calendarList',
          nextPageToken: 'cl-2',
          items: [
            {
              id: 'me@example.com',
              summary: 'me@example.com',
              primary: true,
              accessRole: 'owner',
              timeZone: 'Europe/Paris',
              backgroundColor: '#fff',
              defaultReminders: [],
            },
            {
              id: 'team@group.calendar.google.com',
              summary: 'Team',
              summaryOverride: 'Our team',
              description: 'Shared',
              accessRole: 'writer',
              timeZone: 'UTC',
            },
          ],
        },
      },
    },
    calls: [['GET', '/users/me/calendarList', { maxResults: '2', minAccessRole: 'writer' }]],
    result: {
      calendars: [
        {
          id: 'me@example.com',
          summary: 'me@example.com',
          primary: true,
          accessRole: 'owner',
          timeZone: 'Europe/Paris',
          description: null,
        },
        {
          id: 'team@group.calendar.google.com',
          summary: 'Our team',
          primary: false,
          accessRole: 'writer',
          timeZone: 'UTC',
          description: 'Shared',
        },
      ],
      next: 'cl-2',
    },
  },
  {
    tool: 'calendar_list_events',
    args: { timeMin: '2026-03-02T00:00:00+01:00', timeMax: '2026-03-09T00:00:00Z', query: 'review', maxResults: 2 },
    replies: {
      'GET /calendars/primary/events': {
        json: {
          kind: 'calendar#events',
          summary: 'me@example.com',
          timeZone: 'Europe/Paris',
          nextPageToken: 'ev-p2',
          items: [RAW_EVENT, ALL_DAY],
        },
      },
    },
    calls: [
      [
        'GET',
        '/calendars/primary/events',
        {
          timeMin: '2026-03-02T00:00:00+01:00',
          timeMax: '2026-03-09T00:00:00Z',
          singleEvents: 'true',
          orderBy: 'startTime',
          q: 'review',
          maxResults: '2',
        },
      ],
    ],
    result: { calendarId: 'primary', timeZone: 'Europe/Paris', events: [SLIM_EVENT, SLIM_ALL_DAY], next: 'ev-p2' },
  },
  {
    name: 'calendar_list_events (dates in a zone across DST, another calendar, next page)',
    tool: 'calendar_list_events',
    args: {
      calendarId: 'team@group.calendar.google.com',
      timeMin: '2026-03-28',
      timeMax: '2026-03-30T08:30',
      timeZone: 'Europe/Paris',
      cursor: 'ev-p2',
    },
    replies: { 'GET /calendars/team%40group.calendar.google.com/events': { json: { items: [] } } },
    calls: [
      [
        'GET',
        '/calendars/team%40group.calendar.google.com/events',
        {
          timeMin: '2026-03-28T00:00:00+01:00',
          timeMax: '2026-03-30T08:30:00+02:00',
          singleEvents: 'true',
          orderBy: 'startTime',
          maxResults: '25',
          pageToken: 'ev-p2',
          timeZone: 'Europe/Paris',
        },
      ],
    ],
    result: { calendarId: 'team@group.calendar.google.com', timeZone: null, events: [], next: null },
  },
  {
    tool: 'calendar_get_event',
    args: { eventId: 'ev1' },
    replies: { 'GET /calendars/primary/events/ev1': { json: RAW_EVENT } },
    calls: [['GET', '/calendars/primary/events/ev1']],
    result: {
      ...SLIM_EVENT,
      timeZone: 'Europe/Paris',
      description: 'Agenda:\n1. specs',
      creator: 'me@example.com',
      attendees: [
        { email: 'me@example.com', name: null, response: 'accepted', optional: false, organizer: true, self: true },
        { email: 'bob@example.com', name: 'Bob', response: 'tentative', optional: true, organizer: false, self: false },
      ],
      conference: { status: null, entryPoints: [{ type: 'video', uri: 'https://meet.google.com/abc-defg-hij' }] },
      recurrence: [],
      visibility: 'default',
      created: RAW_EVENT.created,
      updated: RAW_EVENT.updated,
    },
  },
  {
    name: 'calendar_create_event (all day, one day, no invitations)',
    tool: 'calendar_create_event',
    args: { summary: 'Offsite', start: '2026-12-31', sendUpdates: 'none' },
    replies: {
      'POST /calendars/primary/events': {
        json: { ...ALL_DAY, start: { date: '2026-12-31' }, end: { date: '2027-01-01' } },
      },
    },
    calls: [
      [
        'POST',
        '/calendars/primary/events',
        { sendUpdates: 'none' },
        { summary: 'Offsite', start: { date: '2026-12-31' }, end: { date: '2027-01-01' } },
      ],
    ],
    result: {
      id: 'ev2',
      summary: 'Offsite',
      start: '2026-12-31',
      end: '2027-01-01',
      attendees: [],
      meetLink: null,
      conferenceStatus: null,
      htmlLink: null,
    },
  },
  {
    tool: 'calendar_create_event',
    args: {
      summary: 'Design review',
      start: '2026-03-02T14:00:00+01:00',
      end: '2026-03-02T15:00:00+01:00',
      attendees: ['Bob@Example.com', 'me@example.com', 'bob@example.com'],
      description: 'Agenda',
      location: 'Room 4',
    },
    replies: { 'POST /calendars/primary/events': { json: RAW_EVENT } },
    calls: [
      [
        'POST',
        '/calendars/primary/events',
        { sendUpdates: 'all' },
        {
          summary: 'Design review',
          start: { dateTime: '2026-03-02T14:00:00+01:00' },
          end: { dateTime: '2026-03-02T15:00:00+01:00' },
          description: 'Agenda',
          location: 'Room 4',
          attendees: [{ email: 'bob@example.com' }, { email: 'me@example.com' }],
        },
      ],
    ],
    result: SAVED,
  },
  {
    tool: 'calendar_update_event',
    args: { eventId: 'ev1', summary: 'Design review v2', location: '', sendUpdates: 'externalOnly' },
    replies: { 'PATCH /calendars/primary/events/ev1': { json: { ...RAW_EVENT, summary: 'Design review v2' } } },
    calls: [
      [
        'PATCH',
        '/calendars/primary/events/ev1',
        { sendUpdates: 'externalOnly' },
        { summary: 'Design review v2', location: '' },
      ],
    ],
    result: { ...SAVED, summary: 'Design review v2', updated: ['summary', 'location'] },
  },
  {
    name: 'calendar_update_event (a moved start keeps the duration; invite and remove people)',
    tool: 'calendar_update_event',
    args: {
      eventId: 'ev1',
      start: '2026-03-02T16:30:00',
      addAttendees: ['carol@example.com', 'ME@example.com'],
      removeAttendees: ['bob@example.com'],
    },
    replies: {
      'GET /calendars/primary/events/ev1': { json: RAW_EVENT },
      'PATCH /calendars/primary/events/ev1': { json: RAW_EVENT },
    },
    calls: [
      ['GET', '/calendars/primary/events/ev1'],
      [
        'PATCH',
        '/calendars/primary/events/ev1',
        { sendUpdates: 'all' },
        {
          start: { dateTime: '2026-03-02T16:30:00', timeZone: 'Europe/Paris', date: null },
          end: { dateTime: '2026-03-02T17:30:00+01:00', timeZone: 'Europe/Paris', date: null },
          attendees: [
            { email: 'me@example.com', organizer: true, self: true, responseStatus: 'accepted' },
            { email: 'carol@example.com' },
          ],
        },
      ],
    ],
    result: { ...SAVED, updated: ['start', 'end', 'attendees'] },
  },
  {
    tool: 'calendar_delete_event',
    args: { calendarId: 'team@group.calendar.google.com', eventId: 'ev2_20260305', sendUpdates: 'none' },
    replies: { 'DELETE /calendars/team%40group.calendar.google.com/events/ev2_20260305': NO_CONTENT },
    calls: [['DELETE', '/calendars/team%40group.calendar.google.com/events/ev2_20260305', { sendUpdates: 'none' }]],
    result: { eventId: 'ev2_20260305', calendarId: 'team@group.calendar.google.com', deleted: true },
  },
  {
    tool: 'calendar_find_free_busy',
    args: {
      calendars: ['Bob@example.com', 'carol@example.com', 'primary', 'ghost@example.com'],
      timeMin: '2026-03-02T09:00',
      timeMax: '2026-03-02T18:00',
      timeZone: 'Europe/Paris',
      minFreeMinutes: 60,
    },
    replies: {
      'POST /freeBusy': {
        json: {
          kind: 'calendar#freeBusy',
          timeMin: '2026-03-02T08:00:00.000Z',
          timeMax: '2026-03-02T17:00:00.000Z',
          calendars: {
            'bob@example.com': {
              busy: [
                { start: '2026-03-02T10:00:00+01:00', end: '2026-03-02T11:00:00+01:00' },
                { start: '2026-03-02T13:00:00+01:00', end: '2026-03-02T14:30:00+01:00' },
              ],
            },
            'carol@example.com': {
              busy: [
                { start: '2026-03-02T10:30:00+01:00', end: '2026-03-02T12:30:00+01:00' },
                { start: '2026-03-02T16:45:00+01:00', end: '2026-03-02T19:00:00+01:00' },
              ],
            },
            primary: { busy: [] },
            'ghost@example.com': { errors: [{ domain: 'global', reason: 'notFound' }], busy: [] },
          },
        },
      },
    },
    calls: [
      [
        'POST',
        '/freeBusy',
        {},
        {
          timeMin: '2026-03-02T09:00:00+01:00',
          timeMax: '2026-03-02T18:00:00+01:00',
          timeZone: 'Europe/Paris',
          items: [
            { id: 'bob@example.com' },
            { id: 'carol@example.com' },
            { id: 'primary' },
            { id: 'ghost@example.com' },
          ],
        },
      ],
    ],
    result: {
      timeMin: '2026-03-02T09:00:00+01:00',
      timeMax: '2026-03-02T18:00:00+01:00',
      calendars: [
        {
          id: 'bob@example.com',
          busy: [
            { start: '2026-03-02T10:00:00+01:00', end: '2026-03-02T11:00:00+01:00' },
            { start: '2026-03-02T13:00:00+01:00', end: '2026-03-02T14:30:00+01:00' },
          ],
        },
        {
          id: 'carol@example.com',
          busy: [
            { start: '2026-03-02T10:30:00+01:00', end: '2026-03-02T12:30:00+01:00' },
            { start: '2026-03-02T16:45:00+01:00', end: '2026-03-02T19:00:00+01:00' },
          ],
        },
        { id: 'primary', busy: [] },
        { id: 'ghost@example.com', busy: [], error: 'notFound' },
      ],
      commonFree: [
        { start: '2026-03-02T09:00:00+01:00', end: '2026-03-02T10:00:00+01:00' },
        { start: '2026-03-02T14:30:00+01:00', end: '2026-03-02T16:45:00+01:00' },
      ],
      note: 'No free/busy information for ghost@example.com (not shared with you, or not a Google calendar): commonFree ignores them.',
    },
  },
];

describe('google-calendar tools: request made and slim result', () => {
  for (const c of CASES) {
    test(c.name ?? c.tool, async () => {
      route(c.replies);
      assert.deepEqual(await ok(c.tool, c.args), c.result);
      assertCalls(c.calls);
    });
  }

  test('the table covers every tool of the manifest', () => {
    const tools = new Set(gw.gateway.registry.plugin('google-calendar')!.manifest.tools.map((t) => t.name));
    assert.deepEqual(new Set(CASES.map((c) => c.tool)), tools);
  });
});

describe('google-calendar times and Meet', () => {
  test('a Meet link is requested with conferenceDataVersion=1 and a fresh requestId; local times carry the zone', async () => {
    const pending = {
      ...RAW_EVENT,
      hangoutLink: undefined,
      conferenceData: {
        createRequest: {
          requestId: 'x',
          conferenceSolutionKey: { type: 'hangoutsMeet' },
          status: { statusCode: 'pending' },
        },
      },
    };
    route({ 'POST /calendars/primary/events': { json: pending } });
    const r = await ok('calendar_create_event', {
      summary: 'Sync',
      start: '2026-07-01T09:00:00',
      end: '2026-07-01T09:30:00',
      timeZone: 'America/New_York',
      addMeet: true,
    });
    assert.equal(r.conferenceStatus, 'pending');
    assert.equal(r.meetLink, null);
    const req = upstream.requests[0]!;
    assert.deepEqual(Object.fromEntries(req.query), { conferenceDataVersion: '1', sendUpdates: 'all' });
    const body = req.json as any;
    assert.deepEqual(body.start, { dateTime: '2026-07-01T09:00:00', timeZone: 'America/New_York' });
    assert.deepEqual(body.end, { dateTime: '2026-07-01T09:30:00', timeZone: 'America/New_York' });
    assert.equal(body.conferenceData.createRequest.conferenceSolutionKey.type, 'hangoutsMeet');
    const first = body.conferenceData.createRequest.requestId as string;
    assert.match(first, /^wb-[a-z0-9]+-[a-z0-9]+$/);
    await ok('calendar_create_event', {
      summary: 'Sync',
      start: '2026-07-01T09:00:00Z',
      end: '2026-07-01T09:30:00Z',
      addMeet: true,
    });
    assert.notEqual(
      (upstream.requests[1]!.json as any).conferenceData.createRequest.requestId,
      first,
      'each request gets its own requestId',
    );
  });

  test('list events without timeMin starts now (in UTC)', async () => {
    route({ 'GET /calendars/primary/events': { json: { items: [] } } });
    const before = Date.now();
    await ok('calendar_list_events', {});
    const q = upstream.requests[0]!.query;
    assert.match(q.get('timeMin')!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.ok(Math.abs(Date.parse(q.get('timeMin')!) - before) < 5000);
    assert.equal(q.get('timeMax'), null);
  });

  test('an all-day event moved by its start keeps its length in days; a timed event can become all-day', async () => {
    route({
      'GET /calendars/primary/events/ev2': { json: ALL_DAY },
      'PATCH /calendars/primary/events/ev2': { json: ALL_DAY },
    });
    await ok('calendar_update_event', { eventId: 'ev2', start: '2026-03-30' });
    assert.deepEqual(upstream.requests[1]!.json, {
      start: { date: '2026-03-30', dateTime: null },
      end: { date: '2026-04-01', dateTime: null },
    });
    route({ 'PATCH /calendars/primary/events/ev1': { json: RAW_EVENT } });
    await ok('calendar_update_event', { eventId: 'ev1', start: '2026-03-02', end: '2026-03-03' });
    assertCalls([
      [
        'PATCH',
        '/calendars/primary/events/ev1',
        { sendUpdates: 'all' },
        { start: { date: '2026-03-02', dateTime: null }, end: { date: '2026-03-03', dateTime: null } },
      ],
    ]);
  });

  test('a moved end alone is checked against the current start', async () => {
    route({ 'GET /calendars/primary/events/ev1': { json: RAW_EVENT } });
    await fails(
      'calendar_update_event',
      { eventId: 'ev1', end: '2026-03-02T13:00:00+01:00' },
      /end 2026-03-02T13:00:00\+01:00 is not after start 2026-03-02T14:00:00\+01:00/,
    );
    assert.ok(upstream.requests.every((r) => r.method === 'GET'));
  });

  const bad: Array<[string, string, Record<string, unknown>, RegExp]> = [
    [
      'end before start',
      'calendar_create_event',
      { summary: 'x', start: '2026-03-02T15:00:00Z', end: '2026-03-02T14:00:00Z' },
      /end 2026-03-02T14:00:00Z is not after start 2026-03-02T15:00:00Z: an event must end after it starts/,
    ],
    [
      'end equal to start across offsets',
      'calendar_create_event',
      { summary: 'x', start: '2026-03-02T15:00:00+01:00', end: '2026-03-02T14:00:00Z' },
      /is not after start/,
    ],
    [
      'an unknown zone',
      'calendar_create_event',
      { summary: 'x', start: '2026-03-02T15:00:00', end: '2026-03-02T16:00:00', timeZone: 'Europe/Atlantis' },
      /timeZone "Europe\/Atlantis" is not a time zone: use an IANA name/,
    ],
    [
      'a local time without a zone',
      'calendar_create_event',
      { summary: 'x', start: '2026-03-02T15:00', end: '2026-03-02T16:00' },
      /start "2026-03-02T15:00" has no UTC offset: add one \(e\.g\. "2026-03-02T15:00:00\+01:00"/,
    ],
    [
      'an impossible date',
      'calendar_create_event',
      { summary: 'x', start: '2026-02-30' },
      /start "2026-02-30" is not a real date/,
    ],
    [
      'an impossible time',
      'calendar_create_event',
      { summary: 'x', start: '2026-03-02T25:00:00Z', end: '2026-03-02T26:00:00Z' },
      /is not a real date and time/,
    ],
    [
      'not a time at all',
      'calendar_list_events',
      { timeMin: 'tomorrow 3pm' },
      /timeMin "tomorrow 3pm" is not a date or time: use "YYYY-MM-DD"/,
    ],
    [
      'all-day end equal to start',
      'calendar_create_event',
      { summary: 'x', start: '2026-03-02', end: '2026-03-02' },
      /end is exclusive.*omit end for a one-day event/,
    ],
    [
      'a date start with a time end',
      'calendar_create_event',
      { summary: 'x', start: '2026-03-02', end: '2026-03-02T10:00:00Z' },
      /start is a date \(an all-day event\) but end is a time/,
    ],
    [
      'a timed event without end',
      'calendar_create_event',
      { summary: 'x', start: '2026-03-02T10:00:00Z' },
      /end is required for a timed event/,
    ],
    [
      'an empty window',
      'calendar_list_events',
      { timeMin: '2026-03-02T10:00:00Z', timeMax: '2026-03-02T09:00:00Z' },
      /timeMax 2026-03-02T09:00:00Z is not after timeMin/,
    ],
    [
      'an empty free/busy window',
      'calendar_find_free_busy',
      { calendars: ['a@example.com'], timeMin: '2026-03-02', timeMax: '2026-03-01', timeZone: 'UTC' },
      /the window is empty/,
    ],
    ['nothing to update', 'calendar_update_event', { eventId: 'ev1' }, /Nothing to update/],
    [
      'attendees and addAttendees',
      'calendar_update_event',
      { eventId: 'ev1', attendees: ['a@example.com'], addAttendees: ['b@example.com'] },
      /either attendees .* or addAttendees\/removeAttendees, not both/,
    ],
    [
      'schema: an attendee that is not an email',
      'calendar_create_event',
      { summary: 'x', start: '2026-03-02', attendees: ['Bob'] },
      /Invalid arguments for calendar_create_event/,
    ],
    [
      'schema: sendUpdates value',
      'calendar_delete_event',
      { eventId: 'ev1', sendUpdates: 'everyone' },
      /Invalid arguments for calendar_delete_event/,
    ],
    [
      'schema: event id with a slash',
      'calendar_get_event',
      { eventId: 'ev1/../x' },
      /Invalid arguments for calendar_get_event/,
    ],
  ];
  for (const [name, tool, args, pattern] of bad) {
    test(`refused before any request: ${name}`, async () => {
      route({});
      await fails(tool, args, pattern);
      assert.equal(upstream.requests.length, 0);
    });
  }
});

describe('google-calendar refuses dot-segment ids', () => {
  test('calendarId or eventId "." or ".." is refused before any request (it would address another resource)', async () => {
    route({});
    for (const id of ['.', '..']) {
      await fails('calendar_get_event', { eventId: id }, new RegExp(`Invalid eventId: "${id.replace(/\./g, '\\.')}"`));
      await fails('calendar_update_event', { eventId: id, summary: 'x' }, /Invalid eventId/);
      await fails('calendar_delete_event', { eventId: id }, /Invalid eventId/);
      await fails('calendar_delete_event', { calendarId: id, eventId: 'ev1' }, /Invalid calendarId/);
      await fails('calendar_list_events', { calendarId: id }, /Invalid calendarId/);
      await fails('calendar_create_event', { calendarId: id, summary: 'x', start: '2026-03-02' }, /Invalid calendarId/);
    }
    assert.equal(upstream.requests.length, 0);
  });
});

describe('google-calendar error mapping', () => {
  const gErr = (code: number, message: string, reason: string, domain = 'global') => ({
    error: { errors: [{ domain, reason, message }], code, message },
  });
  const cases: Array<[string, string, Record<string, unknown>, string, UpstreamReply, RegExp]> = [
    [
      '401 invalid credentials',
      'calendar_list_calendars',
      {},
      'GET /users/me/calendarList',
      { status: 401, json: gErr(401, 'Invalid Credentials', 'authError') },
      /rejected the access token \(401\) while trying to list your calendars: reconnect google-calendar/,
    ],
    [
      '403 insufficient scopes (free/busy names its scope)',
      'calendar_find_free_busy',
      { calendars: ['a@example.com'], timeMin: '2026-03-02T00:00:00Z', timeMax: '2026-03-03T00:00:00Z' },
      'POST /freeBusy',
      {
        status: 403,
        json: {
          error: {
            code: 403,
            message: 'Request had insufficient authentication scopes.',
            status: 'PERMISSION_DENIED',
            details: [{ reason: 'ACCESS_TOKEN_SCOPE_INSUFFICIENT' }],
          },
        },
      },
      /lacks the OAuth scope needed to check free\/busy times \(403; needs https:\/\/www\.googleapis\.com\/auth\/calendar\.events\.freebusy\): reconnect google-calendar/,
    ],
    [
      '403 rate limit',
      'calendar_get_event',
      { eventId: 'ev1' },
      'GET /calendars/primary/events/ev1',
      { status: 403, json: gErr(403, 'Rate Limit Exceeded', 'rateLimitExceeded', 'usageLimits') },
      /rate limited the request to read event ev1 \(403 rateLimitExceeded\): wait a minute and retry/,
    ],
    [
      '403 user rate limit',
      'calendar_list_events',
      { timeMin: '2026-03-02T00:00:00Z' },
      'GET /calendars/primary/events',
      { status: 403, json: gErr(403, 'User Rate Limit Exceeded', 'userRateLimitExceeded', 'usageLimits') },
      /rate limited .* \(403 userRateLimitExceeded\)/,
    ],
    [
      '403 organizer only',
      'calendar_update_event',
      { eventId: 'ev1', summary: 'x' },
      'PATCH /calendars/primary/events/ev1',
      { status: 403, json: gErr(403, 'Forbidden for non-organizer', 'forbiddenForNonOrganizer', 'calendar') },
      /refused permission to update event ev1 \(403 forbiddenForNonOrganizer\)\. Google Calendar said: Forbidden for non-organizer/,
    ],
    [
      '404 not found',
      'calendar_get_event',
      { eventId: 'nope' },
      'GET /calendars/primary/events/nope',
      { status: 404, json: gErr(404, 'Not Found', 'notFound') },
      /found nothing while trying to read event nope \(404\).*calendar_list_events/,
    ],
    [
      '409 duplicate',
      'calendar_create_event',
      { summary: 'x', start: '2026-03-02' },
      'POST /calendars/primary/events',
      { status: 409, json: gErr(409, 'The requested identifier already exists.', 'duplicate') },
      /refused to create the event "x" \(409 duplicate\): The requested identifier already exists/,
    ],
    [
      '410 already deleted',
      'calendar_delete_event',
      { eventId: 'ev1' },
      'DELETE /calendars/primary/events/ev1',
      { status: 410, json: gErr(410, 'Resource has been deleted', 'deleted') },
      /gone \(410\) while trying to delete event ev1: the event was already deleted/,
    ],
    [
      '400 time range',
      'calendar_list_events',
      { timeMin: '2026-03-02T00:00:00Z' },
      'GET /calendars/primary/events',
      { status: 400, json: gErr(400, 'The specified time range is empty.', 'timeRangeEmpty', 'calendar') },
      /refused to list the events of calendar primary \(400 timeRangeEmpty\): The specified time range is empty/,
    ],
    [
      '429 with retry-after',
      'calendar_list_calendars',
      {},
      'GET /users/me/calendarList',
      {
        status: 429,
        headers: { 'retry-after': '12' },
        json: gErr(429, 'Too many requests', 'rateLimitExceeded', 'usageLimits'),
      },
      /rate limited the request to list your calendars \(429 rateLimitExceeded\): retry after 12 seconds/,
    ],
    [
      '503 not JSON',
      'calendar_get_event',
      { eventId: 'ev1' },
      'GET /calendars/primary/events/ev1',
      { status: 503, body: 'unavailable' },
      /server error \(503\) while trying to read event ev1: retry later/,
    ],
  ];
  for (const [name, tool, args, routeKey, reply, pattern] of cases) {
    test(name, async () => {
      route({ [routeKey]: reply });
      await fails(tool, args, pattern);
    });
  }
});
