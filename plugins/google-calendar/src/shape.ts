/**
 * @module plugins/google-calendar/src/shape
 * Google Calendar events as the tools return them: a row of a list, one event in detail, and an
 * event just saved.
 */
import type { EventTime } from './time.js';

export interface RawAttendee {
  email?: string;
  displayName?: string;
  responseStatus?: string;
  optional?: boolean;
  organizer?: boolean;
  self?: boolean;
}

export interface RawEvent {
  id?: string;
  summary?: string;
  description?: string;
  location?: string;
  status?: string;
  htmlLink?: string;
  hangoutLink?: string;
  start?: EventTime;
  end?: EventTime;
  organizer?: { email?: string };
  creator?: { email?: string };
  attendees?: RawAttendee[];
  conferenceData?: {
    createRequest?: { status?: { statusCode?: string } };
    entryPoints?: Array<{ entryPointType?: string; uri?: string }>;
  };
  recurringEventId?: string;
  recurrence?: string[];
  visibility?: string;
  created?: string;
  updated?: string;
}

/** An email as compared and sent: trimmed, in lower case. */
export const normEmail = (e: string | undefined): string => String(e).trim().toLowerCase();

/** The date-time or date of one side of an event. */
export const when = (t: EventTime | undefined): string | null => (t ? t.dateTime || t.date || null : null);

const attendeesOf = (e: RawEvent): RawAttendee[] => (Array.isArray(e.attendees) ? e.attendees : []);

function meetLink(e: RawEvent): string | null | undefined {
  if (e.hangoutLink) return e.hangoutLink;
  const video = (e.conferenceData?.entryPoints || []).find((p) => p.entryPointType === 'video');
  return video ? video.uri : null;
}

export function slimEvent(e: RawEvent) {
  return {
    id: e.id,
    summary: e.summary ?? '(no title)',
    start: when(e.start),
    end: when(e.end),
    allDay: Boolean(e.start && e.start.date && !e.start.dateTime),
    location: e.location ?? null,
    status: e.status ?? null,
    organizer: e.organizer ? (e.organizer.email ?? null) : null,
    attendeeCount: Array.isArray(e.attendees) ? e.attendees.length : 0,
    meetLink: meetLink(e),
    recurringEventId: e.recurringEventId ?? null,
    htmlLink: e.htmlLink ?? null,
  };
}

export function detailEvent(e: RawEvent) {
  const conf = e.conferenceData || null;
  return {
    ...slimEvent(e),
    timeZone: e.start?.timeZone || null,
    description: e.description ?? '',
    creator: e.creator ? (e.creator.email ?? null) : null,
    attendees: attendeesOf(e).map((a) => ({
      email: a.email ?? null,
      name: a.displayName ?? null,
      response: a.responseStatus ?? null,
      optional: Boolean(a.optional),
      organizer: Boolean(a.organizer),
      self: Boolean(a.self),
    })),
    conference: conf
      ? {
          status: conf.createRequest?.status?.statusCode || null,
          entryPoints: (conf.entryPoints || []).map((p) => ({ type: p.entryPointType ?? null, uri: p.uri ?? null })),
        }
      : null,
    recurrence: Array.isArray(e.recurrence) ? e.recurrence : [],
    visibility: e.visibility ?? 'default',
    created: e.created ?? null,
    updated: e.updated ?? null,
  };
}

export function savedEvent(e: RawEvent) {
  const conf = e.conferenceData?.createRequest?.status;
  return {
    id: e.id,
    summary: e.summary ?? '(no title)',
    start: when(e.start),
    end: when(e.end),
    attendees: attendeesOf(e).map((a) => a.email),
    meetLink: meetLink(e),
    conferenceStatus: conf ? (conf.statusCode ?? null) : null,
    htmlLink: e.htmlLink ?? null,
  };
}
