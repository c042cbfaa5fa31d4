/**
 * @module plugins/google-calendar/src/api
 * The Calendar API v3 client and the one place where a Google answer becomes a message an agent
 * can act on: Google's message is the failure's detail, and its reasons (googleErrorInfo) tell a
 * 403 that is a rate limit from a missing OAuth scope, a disabled API or plain permission.
 */
import { createApi, googleErrorInfo, googleReasonKind, segment, type ApiFailure } from 'workbench/plugin-sdk';

export const SCOPES = {
  events: 'https://www.googleapis.com/auth/calendar.events',
  calendars: 'https://www.googleapis.com/auth/calendar.calendarlist.readonly',
  freebusy: 'https://www.googleapis.com/auth/calendar.events.freebusy',
};

function calendarError(f: ApiFailure): Error {
  const { action, status, detail } = f;
  const info = googleErrorInfo(f.data);
  const { reasons } = info;
  const kind = googleReasonKind(info);
  const said = detail ? ` Google Calendar said: ${detail}.` : '';
  const reason = reasons.length ? ` ${reasons[0]}` : '';
  if (status === 429 || (status === 403 && (kind === 'rate-limit' || kind === 'daily-limit'))) {
    const wait = f.retryAfterSec !== undefined ? `retry after ${f.retryAfterSec} seconds` : 'wait a minute and retry';
    return new Error(`Google Calendar rate limited the request to ${action} (${status}${reason}): ${wait}.`);
  }
  if (status === 401)
    return new Error(
      `Google rejected the access token (401) while trying to ${action}: reconnect google-calendar.${said}`,
    );
  if (status === 403 && (kind === 'scope' || /scope/i.test(detail))) {
    const scope = typeof f.options['scope'] === 'string' ? f.options['scope'] : SCOPES.events;
    return new Error(
      `The Google Calendar connection lacks the OAuth scope needed to ${action} (403; needs ${scope}): reconnect google-calendar and approve every permission on Google's consent screen.`,
    );
  }
  if (status === 403 && kind === 'disabled') {
    return new Error(
      `The Google Calendar API is not enabled in the Google Cloud project of this Workbench's OAuth client (403): the operator must enable it, then retry.${said}`,
    );
  }
  if (status === 403) {
    return new Error(
      `Google Calendar refused permission to ${action} (403${reason}).${said || ' You may only read this calendar, or only the organizer may change this event.'}`,
    );
  }
  if (status === 404) {
    return new Error(
      `Google Calendar found nothing while trying to ${action} (404): the calendar or event id is wrong, or you cannot see it (calendar ids come from calendar_list_calendars, event ids from calendar_list_events).${said}`,
    );
  }
  if (status === 410)
    return new Error(`Google Calendar says it is gone (410) while trying to ${action}: the event was already deleted.`);
  if (status === 400 || status === 409 || status === 412 || status === 422)
    return new Error(
      `Google Calendar refused to ${action} (${status}${reason}): ${detail || 'the request was not valid'}.`,
    );
  if (status >= 500)
    return new Error(`Google Calendar had a server error (${status}) while trying to ${action}: retry later.${said}`);
  return new Error(`Google Calendar answered HTTP ${status} while trying to ${action}.${said}`);
}

/** Requests take `scope` (the OAuth scope the call needs, for the 403 wording; default: events). */
export const gcal = createApi({
  base: 'https://www.googleapis.com/calendar/v3',
  provider: 'Google Calendar',
  integration: 'google-calendar',
  failure: calendarError,
});

/** A calendar's path; "." and ".." are refused (a URL would resolve them away). */
export const calPath = (id: string | undefined): string => `/calendars/${segment(id || 'primary', 'calendarId')}`;
export const eventPath = (calendarId: string | undefined, eventId: string): string =>
  `${calPath(calendarId)}/events/${segment(eventId, 'eventId')}`;
