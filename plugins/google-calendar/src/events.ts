/**
 * @module plugins/google-calendar/src/events
 * Events: listing a calendar's agenda, reading one event, and creating, updating (rescheduling,
 * inviting, adding Meet) and deleting events.
 */
import { changes, defineTool, reads, z } from 'workbench/plugin-sdk';
import { calPath, eventPath, gcal } from './api.js';
import { calendarId, cursor, emails, eventId, sendUpdates, time, timeZone } from './schema.js';
import { detailEvent, normEmail, savedEvent, slimEvent, when, type RawAttendee, type RawEvent } from './shape.js';
import { bound, checkZone, dateString, eventTimes, formatInstant, parseWhen, type EventTime } from './time.js';

/** What events.insert and events.patch are sent. */
interface EventBody {
  summary?: string;
  description?: string;
  location?: string;
  start?: EventTime;
  end?: EventTime;
  attendees?: RawAttendee[];
  conferenceData?: ReturnType<typeof meetRequest>;
}

/** A unique conference request id (Google dedupes createRequests by it). */
const requestId = () => `wb-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
const meetRequest = () => ({
  createRequest: { requestId: requestId(), conferenceSolutionKey: { type: 'hangoutsMeet' } },
});
const invitees = (list: string[]): RawAttendee[] => [...new Set(list.map(normEmail))].map((email) => ({ email }));

export const listEvents = defineTool({
  description:
    'List the events (meetings, appointments) of a Google calendar in a time window, in start order with recurring events expanded: what is on my agenda today, this week, next Monday; meetings matching some text. Each row has id, summary, start, end, allDay, location, status, organizer, attendeeCount and meetLink. Without timeMin it starts now. Times are RFC 3339 with an offset ("2026-03-02T09:00:00+01:00"), or local times or dates with timeZone. When `next` is not null, call again with `cursor`. Use calendar_get_event for the description and attendees of one event.',
  input: z.object({
    calendarId: calendarId('Calendar id (an email address for a person\'s calendar); "primary" is the user\'s own.'),
    timeMin: time(
      'Start of the window: RFC 3339 ("2026-03-02T00:00:00Z"), or "2026-03-02" / "2026-03-02T08:00" with timeZone. Default: now.',
    ).optional(),
    timeMax: time('End of the window (exclusive), same forms as timeMin.').optional(),
    timeZone: timeZone(
      'IANA zone ("Europe/Paris") for dates and local times in timeMin/timeMax and for the times returned.',
    ),
    query: z
      .string()
      .max(500)
      .optional()
      .describe('Free text matched against summary, description, location and attendees.'),
    maxResults: z.int().min(1).max(250).default(25).describe('Events per page.'),
    cursor,
  }),
  annotations: reads('List calendar events'),
  handler: async (ctx, args) => {
    const tz = checkZone(args.timeZone);
    const min =
      args.timeMin !== undefined
        ? bound(args.timeMin, 'timeMin', tz)
        : { ms: Date.now(), text: formatInstant(Math.floor(Date.now() / 1000) * 1000, tz) };
    const max = args.timeMax !== undefined ? bound(args.timeMax, 'timeMax', tz) : undefined;
    if (max && max.ms <= min.ms)
      throw new Error(`timeMax ${args.timeMax} is not after timeMin ${args.timeMin ?? '(now)'}: the window is empty.`);
    const id = args.calendarId || 'primary';
    const data = await gcal.json<{ items?: RawEvent[]; timeZone?: string; nextPageToken?: string }>(
      ctx,
      'GET',
      `${calPath(id)}/events`,
      {
        query: {
          timeMin: min.text,
          timeMax: max?.text,
          singleEvents: 'true',
          orderBy: 'startTime',
          q: args.query,
          maxResults: args.maxResults ?? 25,
          pageToken: args.cursor,
          timeZone: tz,
        },
        action: `list the events of calendar ${id}`,
      },
    );
    const events = (Array.isArray(data.items) ? data.items : []).map(slimEvent);
    return { calendarId: id, timeZone: data.timeZone || null, events, next: data.nextPageToken || null };
  },
});

export const getEvent = defineTool({
  description:
    'Read one Google Calendar event: summary, start, end, time zone, location, description, organizer, attendees with their responses (accepted, declined, tentative, needsAction), the Google Meet video call link and dial-in entry points, recurrence rules and links. Use it after calendar_list_events.',
  input: z.object({
    calendarId: calendarId(),
    eventId: eventId('Event id from calendar_list_events.'),
    timeZone: timeZone('IANA zone for the times returned.'),
  }),
  annotations: reads('Get calendar event'),
  handler: async (ctx, args) => {
    const e = await gcal.json<RawEvent>(ctx, 'GET', eventPath(args.calendarId, args.eventId), {
      query: { timeZone: checkZone(args.timeZone) },
      action: `read event ${args.eventId}`,
    });
    return detailEvent(e);
  },
});

export const createEvent = defineTool({
  description:
    'Create (schedule, book) a Google Calendar event or meeting: summary, start and end, attendees invited by email, description, location, and optionally a Google Meet video link (addMeet). Timed events: start and end as RFC 3339 ("2026-03-02T14:00:00+01:00") or local times with timeZone ("2026-03-02T14:00:00" + "Europe/Paris"). All-day events: start as "YYYY-MM-DD" (end, exclusive, defaults to the next day). Invitations are emailed to attendees unless sendUpdates is none. Returns the event id, its link and the Meet link. Use calendar_find_free_busy first to pick a time when everyone is free.',
  input: z.object({
    calendarId: calendarId('Calendar to create it in; "primary" is the user\'s own.'),
    summary: z.string().min(1).max(1024).describe('Title.'),
    start: time('Start: RFC 3339 date-time, a local date-time with timeZone, or "YYYY-MM-DD" for an all-day event.'),
    end: time('End, after start, in the same form (for all-day events the day after the last day).').optional(),
    timeZone: timeZone('IANA zone such as "Europe/Paris"; needed when start/end have no UTC offset.'),
    attendees: emails('Email addresses to invite.'),
    description: z.string().max(8000).optional().describe('Notes or agenda (plain text).'),
    location: z.string().max(1024).optional().describe('Place or address.'),
    addMeet: z.boolean().default(false).describe('Attach a new Google Meet video call link.'),
    sendUpdates: sendUpdates('Who gets an invitation email.'),
  }),
  annotations: changes('Create calendar event'),
  handler: async (ctx, args) => {
    const tz = checkZone(args.timeZone);
    const times = eventTimes(args.start, args.end, tz);
    const body: EventBody = { summary: args.summary, start: times.start, end: times.end };
    if (args.description) body.description = args.description;
    if (args.location) body.location = args.location;
    if (args.attendees && args.attendees.length) body.attendees = invitees(args.attendees);
    if (args.addMeet) body.conferenceData = meetRequest();
    const e = await gcal.json<RawEvent>(ctx, 'POST', `${calPath(args.calendarId)}/events`, {
      query: { conferenceDataVersion: args.addMeet ? 1 : undefined, sendUpdates: args.sendUpdates ?? 'all' },
      body,
      action: `create the event "${args.summary}"`,
    });
    return savedEvent(e);
  },
});

export const updateEvent = defineTool({
  description:
    'Change an existing Google Calendar event or meeting: reschedule it (move start, and end; a moved start alone keeps the duration), rename it, change its description or location, invite or remove attendees, or add a Google Meet link. Give only what changes. Attendees are emailed about the change unless sendUpdates is none. To cancel an event use calendar_delete_event.',
  input: z.object({
    calendarId: calendarId(),
    eventId: eventId(),
    summary: z.string().min(1).max(1024).optional().describe('New title.'),
    start: time('New start (same forms as calendar_create_event).').optional(),
    end: time('New end.').optional(),
    timeZone: timeZone('IANA zone for start/end without a UTC offset.'),
    description: z.string().max(8000).optional().describe('New description (replaces the old one).'),
    location: z.string().max(1024).optional().describe('New location.'),
    attendees: emails('Replace the attendee list with these emails.'),
    addAttendees: emails('Emails to invite (keeps the others).'),
    removeAttendees: emails('Emails to remove from the event.'),
    addMeet: z.boolean().optional().describe('Attach a new Google Meet video call link.'),
    sendUpdates: sendUpdates('Who gets an update email.'),
  }),
  annotations: changes('Update calendar event'),
  handler: async (ctx, args) => {
    const tz = checkZone(args.timeZone);
    const path = eventPath(args.calendarId, args.eventId);
    const changesTime = args.start !== undefined || args.end !== undefined;
    const changesPeople = args.addAttendees !== undefined || args.removeAttendees !== undefined;
    if (args.attendees !== undefined && changesPeople)
      throw new Error('Give either attendees (replace the list) or addAttendees/removeAttendees, not both.');
    const body: EventBody = {};
    for (const k of ['summary', 'description', 'location'] as const) if (args[k] !== undefined) body[k] = args[k];
    if (args.addMeet) body.conferenceData = meetRequest();
    if (args.attendees !== undefined) body.attendees = invitees(args.attendees);
    if (!changesTime && !changesPeople && !Object.keys(body).length) {
      throw new Error(
        'Nothing to update: give at least one of summary, description, location, start, end, attendees, addAttendees, removeAttendees or addMeet.',
      );
    }
    // the event as it is, when a change builds on it
    const needsCurrent = changesPeople || (changesTime && (args.start === undefined || args.end === undefined));
    const current: RawEvent = needsCurrent
      ? await gcal.json<RawEvent>(ctx, 'GET', path, { action: `read event ${args.eventId}` })
      : {};
    if (changesTime) {
      let times: ReturnType<typeof eventTimes>;
      if (args.start !== undefined && args.end !== undefined) times = eventTimes(args.start, args.end, tz);
      else {
        // one bound moves: the other is the event's own, and a moved start keeps the duration
        const zone = tz || current.start?.timeZone || undefined;
        const cur = eventTimes(String(when(current.start)), String(when(current.end)), zone);
        let start = args.start;
        let end = args.end;
        if (start === undefined) start = String(when(current.start));
        else {
          const s = parseWhen(start, 'start', zone);
          const length = cur.ms[1] - cur.ms[0];
          end =
            s.kind === 'date' ? dateString(Date.UTC(s.y, s.mo - 1, s.d) + length) : formatInstant(s.ms + length, zone);
        }
        times = eventTimes(start, end ?? String(when(current.end)), zone);
      }
      // a change between all-day and timed clears the other field
      const [start, end] = [times.start, times.end];
      if (start.date) start.dateTime = end.dateTime = null;
      else start.date = end.date = null;
      body.start = start;
      body.end = end;
    }
    if (changesPeople) {
      const remove = new Set((args.removeAttendees || []).map(normEmail));
      const list = (Array.isArray(current.attendees) ? current.attendees : []).filter(
        (a) => !remove.has(normEmail(a.email)),
      );
      const have = new Set(list.map((a) => normEmail(a.email)));
      for (const email of (args.addAttendees || []).map(normEmail)) {
        if (have.has(email)) continue;
        list.push({ email });
        have.add(email);
      }
      body.attendees = list;
    }
    const e = await gcal.json<RawEvent>(ctx, 'PATCH', path, {
      query: { conferenceDataVersion: args.addMeet ? 1 : undefined, sendUpdates: args.sendUpdates ?? 'all' },
      body,
      action: `update event ${args.eventId}`,
    });
    return { ...savedEvent(e), updated: Object.keys(body) };
  },
});

export const deleteEvent = defineTool({
  description:
    'Delete (cancel, call off) a meeting or event on Google Calendar. Attendees get a cancellation email unless sendUpdates is none. For a recurring event, the id of one occurrence (from calendar_list_events) cancels that occurrence only, the id of the series (recurringEventId) cancels all of them.',
  input: z.object({
    calendarId: calendarId(),
    eventId: eventId(),
    sendUpdates: sendUpdates('Who gets a cancellation email.'),
  }),
  annotations: changes('Delete calendar event', { destructive: true, idempotent: true }),
  handler: async (ctx, args) => {
    const id = args.calendarId || 'primary';
    await gcal.request(ctx, 'DELETE', eventPath(id, args.eventId), {
      query: { sendUpdates: args.sendUpdates ?? 'all' },
      action: `delete event ${args.eventId}`,
      expect: 'text',
    });
    return { eventId: args.eventId, calendarId: id, deleted: true };
  },
});
