/**
 * @module plugins/clevertap/src/records
 * Reading records: the events of one kind in a date range and the profiles of the users who did
 * an event (both read with a cursor, query.ts), and one profile by identity, email or CleverTap id.
 */
import { defineTool, reads, z } from 'workbench/plugin-sdk';
import { call, projectFor, shown } from './api.js';
import { cursor, dateRange, eventName, project, rangeOf } from './args.js';
import { readCursor, type CursorRead } from './query.js';

const limit = z
  .int()
  .min(1)
  .max(1000)
  .default(100)
  .describe(
    'Records to return at least when there are that many (whole batches are returned; the last may go past it).',
  );
const batchSize = z
  .int()
  .min(1)
  .max(5000)
  .default(100)
  .describe("Records per CleverTap batch (CleverTap's batch_size; at most 5000).");
const withProfileProperties = z
  .boolean()
  .default(false)
  .describe("Include each user's custom profile properties (larger answers).");

/** The result of a cursor read, with how to go on. */
function page(tool: string, read: CursorRead) {
  return {
    records: read.records,
    count: read.records.length,
    next: read.next,
    ...(read.next
      ? {
          note:
            read.stopped === 'budget'
              ? `Stopped before the call's request or time budget ran out: call ${tool} again with the same arguments plus cursor set to next for more.`
              : `More records: call ${tool} again with the same arguments plus cursor set to next.`,
        }
      : {}),
  };
}

export const getEvents = defineTool({
  description:
    'Download the events of one kind (e.g. "Charged", "App Launched", "Product Viewed") that happened in a CleverTap project between two dates: each record has the time, the event properties and the user who did it. Returns up to about `limit` records; when `next` is not null, call again with the same arguments plus cursor=next for more.',
  input: z.object({
    project,
    eventName,
    ...dateRange,
    limit,
    batchSize,
    withProfileProperties,
    withAppFields: z
      .boolean()
      .default(false)
      .describe('Include app fields (OS and app version, device make and model).'),
    cursor,
  }),
  annotations: reads('Get events'),
  handler: async (ctx, a) => {
    const p = projectFor(ctx, a.project);
    const read = await readCursor(
      ctx,
      p,
      '/events.json',
      {
        cursor: a.cursor,
        body: { event_name: a.eventName, ...rangeOf(a) },
        query: { batch_size: a.batchSize, app: a.withAppFields, profile: a.withProfileProperties, events: false },
      },
      a.limit,
      `read the "${a.eventName}" events`,
    );
    return { project: shown(p), eventName: a.eventName, ...page('clevertap_get_events', read) };
  },
});

export const getProfilesByEvent = defineTool({
  description:
    'Download the user profiles (identity, name, email, platform, …) of the users who did an event in a CleverTap project between two dates. Returns up to about `limit` profiles; when `next` is not null, call again with the same arguments plus cursor=next for more.',
  input: z.object({
    project,
    eventName,
    ...dateRange,
    limit,
    batchSize,
    withProfileProperties,
    withEventSummary: z.boolean().default(false).describe("Include each profile's event summary (larger answers)."),
    cursor,
  }),
  annotations: reads('Get profiles by event'),
  handler: async (ctx, a) => {
    const p = projectFor(ctx, a.project);
    const read = await readCursor(
      ctx,
      p,
      '/profiles.json',
      {
        cursor: a.cursor,
        body: { event_name: a.eventName, ...rangeOf(a) },
        query: { batch_size: a.batchSize, profile: a.withProfileProperties, events: a.withEventSummary },
      },
      a.limit,
      `read the profiles that did "${a.eventName}"`,
    );
    return { project: shown(p), eventName: a.eventName, ...page('clevertap_get_profiles_by_event', read) };
  },
});

export const getProfile = defineTool({
  description:
    "Look up one user's profile in a CleverTap project by their identity (your app's user id), email, or CleverTap id (objectId): name, email, phone, platform, custom profile properties and the profile's event summary.",
  input: z.object({
    project,
    identity: z.string().min(1).max(500).optional().describe("The user's identity (the id your app gives CleverTap)."),
    email: z.string().min(3).max(320).optional().describe("The user's email address."),
    objectId: z.string().min(1).max(200).optional().describe("CleverTap's id of the profile (its GUID)."),
  }),
  annotations: reads('Get profile'),
  handler: async (ctx, a) => {
    const given = (['identity', 'email', 'objectId'] as const).filter((k) => a[k] !== undefined);
    if (given.length !== 1) throw new Error('Give exactly one of identity, email or objectId.');
    const key = given[0];
    const p = projectFor(ctx, a.project);
    const { data } = await call(ctx, p, 'GET', '/profile.json', `read the profile with ${key} "${a[key]}"`, {
      query: { [key]: a[key] },
    });
    return { project: shown(p), found: data['record'] !== undefined, profile: data['record'] ?? null };
  },
});
