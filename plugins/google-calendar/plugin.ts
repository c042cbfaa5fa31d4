/**
 * @module plugins/google-calendar/plugin
 * Google Calendar API v3 tools acting as the connected Google user (the gateway adds the
 * credential). The tool table, in the order agents see it; the tools live in src/ by area.
 */
import { definePlugin, googleOAuth } from 'workbench/plugin-sdk';
import { SCOPES } from './src/api.js';
import { findFreeBusy, listCalendars } from './src/calendars.js';
import { createEvent, deleteEvent, getEvent, listEvents, updateEvent } from './src/events.js';

export default definePlugin({
  name: 'google-calendar',
  version: '1.0.0',
  displayName: 'Google Calendar',
  description:
    "See the connected Google account's calendars and events (agenda, meetings, schedule), schedule meetings with attendees and Google Meet links, reschedule, edit or cancel events, and check when people are free or busy.",
  auth: googleOAuth([SCOPES.events, SCOPES.calendars, SCOPES.freebusy], ['www.googleapis.com']),
  egress: ['www.googleapis.com'],
  tools: {
    calendar_list_calendars: listCalendars,
    calendar_list_events: listEvents,
    calendar_get_event: getEvent,
    calendar_create_event: createEvent,
    calendar_update_event: updateEvent,
    calendar_delete_event: deleteEvent,
    calendar_find_free_busy: findFreeBusy,
  },
});
