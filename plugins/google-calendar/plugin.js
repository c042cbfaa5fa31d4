/**
 * @module plugins/google-calendar/plugin
 * Google Calendar API v3 tools acting as the connected Google user. Self-contained (the plugin
 * format allows no imports), so the request helper, the one error mapping, the time handling
 * (RFC 3339 and all-day dates checked, local times resolved in an IANA zone with Intl) and the
 * result shapers live here beside the handlers; that is why it is longer than the 400-line
 * guideline. The credential is added by the gateway.
 */

const API = 'https://www.googleapis.com/calendar/v3';
const EVENTS = 'https://www.googleapis.com/auth/calendar.events';
const CALENDARS = 'https://www.googleapis.com/auth/calendar.calendarlist.readonly';
const FREEBUSY = 'https://www.googleapis.com/auth/calendar.events.freebusy';
const DAY = 86400000;

// ---------------------------------------------------------------------------------------------
// Errors: the one place where a Google answer becomes a message an agent can act on.

const RATE_REASONS = ['rateLimitExceeded', 'userRateLimitExceeded', 'quotaExceeded', 'dailyLimitExceeded', 'RATE_LIMIT_EXCEEDED', 'RESOURCE_EXHAUSTED'];
const SCOPE_REASONS = ['insufficientPermissions', 'ACCESS_TOKEN_SCOPE_INSUFFICIENT'];
const DISABLED_REASONS = ['accessNotConfigured', 'SERVICE_DISABLED'];

/** Google's error body: {error: {code, message, status, errors: [{reason, message}], details: [{reason}]}}. */
function googleDetail(data) {
  const err = data && typeof data === 'object' ? data.error : undefined;
  if (err && typeof err === 'object') {
    const reasons = [];
    for (const e of Array.isArray(err.errors) ? err.errors : []) if (e && typeof e.reason === 'string') reasons.push(e.reason);
    for (const d of Array.isArray(err.details) ? err.details : []) if (d && typeof d.reason === 'string') reasons.push(d.reason);
    return { message: typeof err.message === 'string' ? err.message.slice(0, 500) : '', reasons };
  }
  if (err && typeof err === 'string') return { message: String(data.error_description || err).slice(0, 500), reasons: [] };
  if (typeof data === 'string') return { message: data.trim().slice(0, 300), reasons: [] };
  return { message: '', reasons: [] };
}

function calendarError(action, status, retryAfter, data, scope) {
  const { message, reasons } = googleDetail(data);
  const said = message ? ` Google Calendar said: ${message.replace(/[.\s]+$/, '')}.` : '';
  const has = (list) => reasons.some((r) => list.includes(r));
  const wait = retryAfter && /^\d+$/.test(retryAfter.trim()) ? `retry after ${Number(retryAfter)} seconds` : 'wait a minute and retry';
  if (status === 429 || (status === 403 && has(RATE_REASONS))) {
    return new Error(`Google Calendar rate limited the request to ${action} (${status}${reasons.length ? ` ${reasons[0]}` : ''}): ${wait}.`);
  }
  if (status === 401) return new Error(`Google rejected the access token (401) while trying to ${action}: reconnect google-calendar.${said}`);
  if (status === 403 && (has(SCOPE_REASONS) || /scope/i.test(message))) {
    return new Error(`The Google Calendar connection lacks the OAuth scope needed to ${action} (403; needs ${scope}): reconnect google-calendar and approve every permission on Google's consent screen.`);
  }
  if (status === 403 && has(DISABLED_REASONS)) {
    return new Error(`The Google Calendar API is not enabled in the Google Cloud project of this Workbench's OAuth client (403): the operator must enable it, then retry.${said}`);
  }
  if (status === 403) {
    return new Error(`Google Calendar refused permission to ${action} (403${reasons.length ? ` ${reasons[0]}` : ''}).${said || ' You may only read this calendar, or only the organizer may change this event.'}`);
  }
  if (status === 404) return new Error(`Google Calendar found nothing while trying to ${action} (404): the calendar or event id is wrong, or you cannot see it (calendar ids come from calendar_list_calendars, event ids from calendar_list_events).${said}`);
  if (status === 410) return new Error(`Google Calendar says it is gone (410) while trying to ${action}: the event was already deleted.`);
  if (status === 400 || status === 409 || status === 412 || status === 422) {
    return new Error(`Google Calendar refused to ${action} (${status}${reasons.length ? ` ${reasons[0]}` : ''}): ${message || 'the request was not valid'}.`);
  }
  if (status >= 500) return new Error(`Google Calendar had a server error (${status}) while trying to ${action}: retry later.${said}`);
  return new Error(`Google Calendar answered HTTP ${status} while trying to ${action}.${said}`);
}

// ---------------------------------------------------------------------------------------------
// Requests

/** encodeURIComponent, but a lone surrogate becomes U+FFFD (as URLSearchParams does) instead of a URIError */
const enc = (s) => encodeURIComponent(String(s).toWellFormed());

function qs(params) {
  const parts = [];
  for (const [k, v] of Object.entries(params || {})) {
    if (v === undefined || v === null || v === '') continue;
    parts.push(`${enc(k)}=${enc(v)}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

async function gcal(ctx, method, path, { query, body, action, scope = EVENTS }) {
  const headers = { accept: 'application/json' };
  const init = { method, headers };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await ctx.http(`${API}${path}${qs(query)}`, init);
  const text = await res.text();
  let data;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = text;
  }
  if (!res.ok) throw calendarError(action, res.status, res.headers.get('retry-after'), data, scope);
  return data;
}

/**
 * One path segment: "." and ".." are refused before any request, since they are dot segments that
 * a URL resolves away (eventId ".." would address the calendar itself). The manifest's patterns
 * allow dots and RE2 has no lookahead to exclude these two.
 */
function seg(value, name) {
  const s = String(value);
  if (s === '.' || s === '..') throw new Error(`Invalid ${name}: "${s}" is not an id.`);
  return enc(s);
}

const calPath = (id) => `/calendars/${seg(id || 'primary', 'calendarId')}`;
const eventPath = (calendarId, eventId) => `${calPath(calendarId)}/events/${seg(eventId, 'eventId')}`;

// ---------------------------------------------------------------------------------------------
// Time: RFC 3339 date-times, all-day dates, IANA zones (through Intl)

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})?$/;

/** The canonical IANA name of a zone, or an Error naming the argument. */
function checkZone(tz, arg = 'timeZone') {
  if (tz === undefined) return undefined;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    throw new Error(`${arg} "${tz}" is not a time zone: use an IANA name such as "Europe/Paris", "America/New_York" or "UTC".`);
  }
}

/** Minutes east of UTC of a zone at an instant. */
function zoneOffset(tz, ms) {
  const parts = {};
  const fmt = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
  for (const p of fmt.formatToParts(new Date(ms))) parts[p.type] = p.value;
  const asUtc = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour) % 24, Number(parts.minute), Number(parts.second));
  return Math.round((asUtc - Math.floor(ms / 1000) * 1000) / 60000);
}

/** The instant of a wall-clock time in a zone (the later reading in a DST overlap, shifted forward in a gap). */
function localInstant(y, mo, d, h, mi, s, tz) {
  const guess = Date.UTC(y, mo - 1, d, h, mi, s);
  const first = guess - zoneOffset(tz, guess) * 60000;
  const second = guess - zoneOffset(tz, first) * 60000;
  return second;
}

function validDay(y, mo, d) {
  return mo >= 1 && mo <= 12 && d >= 1 && d <= new Date(Date.UTC(y, mo, 0)).getUTCDate();
}

/**
 * A start/end/timeMin/timeMax argument: "YYYY-MM-DD" (a date) or an RFC 3339 date-time, with an
 * offset or, without one, in `tz`. Returns {kind, ms, date?, dateTime?, offset}.
 */
function parseWhen(value, arg, tz) {
  const v = String(value).trim();
  const dm = DATE_RE.exec(v);
  if (dm) {
    const [y, mo, d] = [Number(dm[1]), Number(dm[2]), Number(dm[3])];
    if (!validDay(y, mo, d)) throw new Error(`${arg} "${value}" is not a real date.`);
    return { kind: 'date', date: v, ms: tz ? localInstant(y, mo, d, 0, 0, 0, tz) : Date.UTC(y, mo - 1, d), y, mo, d };
  }
  const m = DATETIME_RE.exec(v);
  if (!m) {
    throw new Error(`${arg} "${value}" is not a date or time: use "YYYY-MM-DD" for a whole day, or RFC 3339 such as "2026-03-02T14:30:00+01:00", "2026-03-02T13:30:00Z", or "2026-03-02T14:30:00" together with timeZone.`);
  }
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6] || '0'].map(Number);
  if (!validDay(y, mo, d) || h > 23 || mi > 59 || s > 59) throw new Error(`${arg} "${value}" is not a real date and time.`);
  const pad = (n, w = 2) => String(n).padStart(w, '0');
  const wall = `${pad(y, 4)}-${pad(mo)}-${pad(d)}T${pad(h)}:${pad(mi)}:${pad(s)}`;
  const off = m[8];
  if (off) {
    if (off !== 'Z' && off !== 'z' && (Number(off.slice(1, 3)) > 23 || Number(off.slice(4, 6)) > 59)) throw new Error(`${arg} "${value}" has an impossible UTC offset.`);
    const offset = off === 'Z' || off === 'z' ? 'Z' : off;
    return { kind: 'dateTime', dateTime: `${wall}${offset}`, ms: Date.parse(`${wall}${offset}`), offset: true };
  }
  if (!tz) {
    throw new Error(`${arg} "${value}" has no UTC offset: add one (e.g. "${wall}+01:00" or "${wall}Z") or give timeZone (e.g. "Europe/Paris").`);
  }
  return { kind: 'dateTime', dateTime: wall, ms: localInstant(y, mo, d, h, mi, s, tz), offset: false };
}

/** An instant as RFC 3339 in a zone ("2026-03-02T14:30:00+01:00"), or in UTC ("…Z"). */
function formatInstant(ms, tz) {
  const pad = (n, w = 2) => String(Math.abs(n)).padStart(w, '0');
  const off = tz ? zoneOffset(tz, ms) : 0;
  const t = new Date(ms + off * 60000);
  const base = `${pad(t.getUTCFullYear(), 4)}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())}T${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())}:${pad(t.getUTCSeconds())}`;
  if (!tz || tz === 'UTC') return `${base}Z`;
  return `${base}${off < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
}

const dateString = (ms) => new Date(ms).toISOString().slice(0, 10);

/** An RFC 3339 bound for events.list and freeBusy (an offset is mandatory there). */
function bound(value, arg, tz) {
  const w = parseWhen(value, arg, tz);
  if (w.kind === 'date') return { ms: w.ms, text: formatInstant(w.ms, tz) };
  return { ms: w.ms, text: w.offset ? w.dateTime : formatInstant(w.ms, tz) };
}

/** The Google start/end objects of an event from start, end and timeZone arguments. */
function eventTimes(startArg, endArg, tz) {
  const start = parseWhen(startArg, 'start', tz);
  if (start.kind === 'date') {
    let endDate;
    if (endArg === undefined) endDate = dateString(Date.UTC(start.y, start.mo - 1, start.d) + DAY);
    else {
      const end = parseWhen(endArg, 'end', tz);
      if (end.kind !== 'date') throw new Error('start is a date (an all-day event) but end is a time: give both as "YYYY-MM-DD", or both as date-times.');
      if (end.date <= start.date) {
        throw new Error(`end ${end.date} is not after start ${start.date}: for all-day events end is exclusive (the day after the last day); omit end for a one-day event.`);
      }
      endDate = end.date;
    }
    return { start: { date: start.date }, end: { date: endDate }, ms: [Date.UTC(start.y, start.mo - 1, start.d), Date.parse(`${endDate}T00:00:00Z`)] };
  }
  if (endArg === undefined) throw new Error('end is required for a timed event (start is a date-time); for an all-day event give start as "YYYY-MM-DD".');
  const end = parseWhen(endArg, 'end', tz);
  if (end.kind !== 'dateTime') throw new Error('start is a date-time but end is a date: give both as date-times, or both as "YYYY-MM-DD" for an all-day event.');
  if (end.ms <= start.ms) throw new Error(`end ${endArg} is not after start ${startArg}: an event must end after it starts.`);
  const one = (w) => (tz ? { dateTime: w.dateTime, timeZone: tz } : { dateTime: w.dateTime });
  return { start: one(start), end: one(end), ms: [start.ms, end.ms] };
}

// ---------------------------------------------------------------------------------------------
// Result shapers

const when = (t) => (t ? t.dateTime || t.date || null : null);

function meetLink(e) {
  if (e.hangoutLink) return e.hangoutLink;
  const video = ((e.conferenceData && e.conferenceData.entryPoints) || []).find((p) => p.entryPointType === 'video');
  return video ? video.uri : null;
}

function slimEvent(e) {
  return {
    id: e.id,
    summary: e.summary ?? '(no title)',
    start: when(e.start),
    end: when(e.end),
    allDay: Boolean(e.start && e.start.date && !e.start.dateTime),
    location: e.location ?? null,
    status: e.status ?? null,
    organizer: e.organizer ? e.organizer.email ?? null : null,
    attendeeCount: Array.isArray(e.attendees) ? e.attendees.length : 0,
    meetLink: meetLink(e),
    recurringEventId: e.recurringEventId ?? null,
    htmlLink: e.htmlLink ?? null,
  };
}

function detailEvent(e) {
  const conf = e.conferenceData || null;
  return {
    ...slimEvent(e),
    timeZone: (e.start && e.start.timeZone) || null,
    description: e.description ?? '',
    creator: e.creator ? e.creator.email ?? null : null,
    attendees: (Array.isArray(e.attendees) ? e.attendees : []).map((a) => ({
      email: a.email ?? null,
      name: a.displayName ?? null,
      response: a.responseStatus ?? null,
      optional: Boolean(a.optional),
      organizer: Boolean(a.organizer),
      self: Boolean(a.self),
    })),
    conference: conf
      ? {
          status: (conf.createRequest && conf.createRequest.status && conf.createRequest.status.statusCode) || null,
          entryPoints: (conf.entryPoints || []).map((p) => ({ type: p.entryPointType ?? null, uri: p.uri ?? null })),
        }
      : null,
    recurrence: Array.isArray(e.recurrence) ? e.recurrence : [],
    visibility: e.visibility ?? 'default',
    created: e.created ?? null,
    updated: e.updated ?? null,
  };
}

function savedEvent(e) {
  const conf = e.conferenceData && e.conferenceData.createRequest && e.conferenceData.createRequest.status;
  return {
    id: e.id,
    summary: e.summary ?? '(no title)',
    start: when(e.start),
    end: when(e.end),
    attendees: (Array.isArray(e.attendees) ? e.attendees : []).map((a) => a.email),
    meetLink: meetLink(e),
    conferenceStatus: conf ? conf.statusCode ?? null : null,
    htmlLink: e.htmlLink ?? null,
  };
}

/** A unique conference request id (Google dedupes createRequests by it). */
const requestId = () => `wb-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;

const meetRequest = () => ({ createRequest: { requestId: requestId(), conferenceSolutionKey: { type: 'hangoutsMeet' } } });

function normEmail(e) {
  return String(e).trim().toLowerCase();
}

// ---------------------------------------------------------------------------------------------
// Handlers

async function listCalendars(ctx, args) {
  const data = await gcal(ctx, 'GET', '/users/me/calendarList', {
    query: { maxResults: args.maxResults ?? 100, pageToken: args.cursor, minAccessRole: args.minAccessRole },
    action: 'list your calendars',
    scope: CALENDARS,
  });
  const calendars = (Array.isArray(data && data.items) ? data.items : []).map((c) => ({
    id: c.id,
    summary: c.summaryOverride || c.summary || c.id,
    primary: Boolean(c.primary),
    accessRole: c.accessRole ?? null,
    timeZone: c.timeZone ?? null,
    description: c.description ?? null,
  }));
  return { calendars, next: (data && data.nextPageToken) || null };
}

async function listEvents(ctx, args) {
  const tz = checkZone(args.timeZone);
  const min = args.timeMin !== undefined ? bound(args.timeMin, 'timeMin', tz) : { ms: Date.now(), text: formatInstant(Math.floor(Date.now() / 1000) * 1000, tz) };
  const max = args.timeMax !== undefined ? bound(args.timeMax, 'timeMax', tz) : undefined;
  if (max && max.ms <= min.ms) throw new Error(`timeMax ${args.timeMax} is not after timeMin ${args.timeMin ?? '(now)'}: the window is empty.`);
  const calendarId = args.calendarId || 'primary';
  const data = await gcal(ctx, 'GET', `${calPath(calendarId)}/events`, {
    query: {
      timeMin: min.text,
      timeMax: max ? max.text : undefined,
      singleEvents: 'true',
      orderBy: 'startTime',
      q: args.query,
      maxResults: args.maxResults ?? 25,
      pageToken: args.cursor,
      timeZone: tz,
    },
    action: `list the events of calendar ${calendarId}`,
  });
  const events = (Array.isArray(data && data.items) ? data.items : []).map(slimEvent);
  return { calendarId, timeZone: (data && data.timeZone) || null, events, next: (data && data.nextPageToken) || null };
}

async function getEvent(ctx, args) {
  const calendarId = args.calendarId || 'primary';
  const e = await gcal(ctx, 'GET', eventPath(calendarId, args.eventId), {
    query: { timeZone: checkZone(args.timeZone) },
    action: `read event ${args.eventId}`,
  });
  return detailEvent(e);
}

async function createEvent(ctx, args) {
  const tz = checkZone(args.timeZone);
  const times = eventTimes(args.start, args.end, tz);
  const body = { summary: args.summary, start: times.start, end: times.end };
  if (args.description) body.description = args.description;
  if (args.location) body.location = args.location;
  if (args.attendees && args.attendees.length) body.attendees = [...new Set(args.attendees.map(normEmail))].map((email) => ({ email }));
  if (args.addMeet) body.conferenceData = meetRequest();
  const calendarId = args.calendarId || 'primary';
  const e = await gcal(ctx, 'POST', `${calPath(calendarId)}/events`, {
    query: { conferenceDataVersion: args.addMeet ? 1 : undefined, sendUpdates: args.sendUpdates ?? 'all' },
    body,
    action: `create the event "${args.summary}"`,
  });
  return savedEvent(e);
}

async function updateEvent(ctx, args) {
  const tz = checkZone(args.timeZone);
  const calendarId = args.calendarId || 'primary';
  const path = eventPath(calendarId, args.eventId);
  const changesTime = args.start !== undefined || args.end !== undefined;
  const changesPeople = args.addAttendees !== undefined || args.removeAttendees !== undefined;
  if (args.attendees !== undefined && changesPeople) throw new Error('Give either attendees (replace the list) or addAttendees/removeAttendees, not both.');
  const body = {};
  for (const k of ['summary', 'description', 'location']) if (args[k] !== undefined) body[k] = args[k];
  if (args.addMeet) body.conferenceData = meetRequest();
  if (args.attendees !== undefined) body.attendees = [...new Set(args.attendees.map(normEmail))].map((email) => ({ email }));
  if (!changesTime && !changesPeople && !Object.keys(body).length) {
    throw new Error('Nothing to update: give at least one of summary, description, location, start, end, attendees, addAttendees, removeAttendees or addMeet.');
  }
  let current;
  if (changesPeople || (changesTime && (args.start === undefined || args.end === undefined))) {
    current = await gcal(ctx, 'GET', path, { action: `read event ${args.eventId}` });
  }
  if (changesTime) {
    let start = args.start;
    let end = args.end;
    if (start === undefined || end === undefined) {
      // one bound moves: the other is the event's own, and a moved start keeps the duration
      const zone = tz || (current.start && current.start.timeZone) || undefined;
      const cur = eventTimes(when(current.start), when(current.end), zone);
      if (start === undefined) start = when(current.start);
      else {
        const s = parseWhen(start, 'start', zone);
        const length = cur.ms[1] - cur.ms[0];
        end = s.kind === 'date' ? dateString(Date.UTC(s.y, s.mo - 1, s.d) + length) : formatInstant(s.ms + length, zone);
      }
      if (end === undefined) end = when(current.end);
      const times = eventTimes(start, end, zone);
      body.start = times.start;
      body.end = times.end;
    } else {
      const times = eventTimes(start, end, tz);
      body.start = times.start;
      body.end = times.end;
    }
    if (body.start.date) {
      body.start.dateTime = null;
      body.end.dateTime = null;
    } else {
      body.start.date = null;
      body.end.date = null;
    }
  }
  if (changesPeople) {
    const remove = new Set((args.removeAttendees || []).map(normEmail));
    const list = (Array.isArray(current.attendees) ? current.attendees : []).filter((a) => !remove.has(normEmail(a.email)));
    const have = new Set(list.map((a) => normEmail(a.email)));
    for (const email of (args.addAttendees || []).map(normEmail)) if (!have.has(email)) { list.push({ email }); have.add(email); }
    body.attendees = list;
  }
  const e = await gcal(ctx, 'PATCH', path, {
    query: { conferenceDataVersion: args.addMeet ? 1 : undefined, sendUpdates: args.sendUpdates ?? 'all' },
    body,
    action: `update event ${args.eventId}`,
  });
  return { ...savedEvent(e), updated: Object.keys(body) };
}

async function deleteEvent(ctx, args) {
  const calendarId = args.calendarId || 'primary';
  await gcal(ctx, 'DELETE', eventPath(calendarId, args.eventId), {
    query: { sendUpdates: args.sendUpdates ?? 'all' },
    action: `delete event ${args.eventId}`,
  });
  return { eventId: args.eventId, calendarId, deleted: true };
}

/** Gaps of at least `minMs` inside [from, to) not covered by any busy interval. */
function freeSlots(busy, from, to, minMs) {
  const spans = busy.map((b) => [Math.max(from, b[0]), Math.min(to, b[1])]).filter((b) => b[1] > b[0]).sort((a, b) => a[0] - b[0]);
  const out = [];
  let at = from;
  for (const [s, e] of spans) {
    if (s - at >= minMs) out.push([at, s]);
    at = Math.max(at, e);
  }
  if (to - at >= minMs) out.push([at, to]);
  return out;
}

async function freeBusy(ctx, args) {
  const tz = checkZone(args.timeZone);
  const min = bound(args.timeMin, 'timeMin', tz);
  const max = bound(args.timeMax, 'timeMax', tz);
  if (max.ms <= min.ms) throw new Error(`timeMax ${args.timeMax} is not after timeMin ${args.timeMin}: the window is empty.`);
  const ids = [...new Set(args.calendars.map((c) => (c === 'primary' ? c : normEmail(c))))];
  const data = await gcal(ctx, 'POST', '/freeBusy', {
    body: { timeMin: min.text, timeMax: max.text, ...(tz ? { timeZone: tz } : {}), items: ids.map((id) => ({ id })) },
    action: 'check free/busy times',
    scope: FREEBUSY,
  });
  const got = (data && data.calendars) || {};
  const allBusy = [];
  const calendars = ids.map((id) => {
    const c = got[id] || got[Object.keys(got).find((k) => normEmail(k) === id)] || {};
    const busy = (Array.isArray(c.busy) ? c.busy : []).map((b) => ({ start: b.start, end: b.end }));
    for (const b of busy) allBusy.push([Date.parse(b.start), Date.parse(b.end)]);
    const errors = (Array.isArray(c.errors) ? c.errors : []).map((e) => e.reason).filter(Boolean);
    return errors.length ? { id, busy, error: errors.join(', ') } : { id, busy };
  });
  const minMs = (args.minFreeMinutes ?? 30) * 60000;
  const commonFree = freeSlots(allBusy, min.ms, max.ms, minMs).map(([s, e]) => ({ start: formatInstant(s, tz), end: formatInstant(e, tz) }));
  const unknown = calendars.filter((c) => c.error).map((c) => c.id);
  return {
    timeMin: min.text,
    timeMax: max.text,
    calendars,
    commonFree,
    ...(unknown.length ? { note: `No free/busy information for ${unknown.join(', ')} (not shared with you, or not a Google calendar): commonFree ignores them.` } : {}),
  };
}

export default {
  calendar_list_calendars: listCalendars,
  calendar_list_events: listEvents,
  calendar_get_event: getEvent,
  calendar_create_event: createEvent,
  calendar_update_event: updateEvent,
  calendar_delete_event: deleteEvent,
  calendar_find_free_busy: freeBusy,
};
