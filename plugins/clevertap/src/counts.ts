/**
 * @module plugins/clevertap/src/counts
 * The counts API: how many times an event happened, how many profiles did it, its daily, weekly
 * or monthly trend (daily active users and uninstalls are trends of CleverTap's system events),
 * the most frequent values of a property, and who is active right now. Each query may be computed
 * asynchronously (query.ts): a tool polls it within the call and otherwise answers "running" with
 * the reqId to collect it later.
 */
import { defineTool, reads, z } from 'workbench/plugin-sdk';
import { call, projectFor, shown, type Answer, type Project } from './api.js';
import { dateRange, eventName, project, rangeOf, reqId } from './args.js';
import { runQuery, stillRunning, withoutStatus } from './query.js';

const propertyFilter = z.object({
  name: z.string().min(1).max(200).describe('The event property, e.g. "Amount".'),
  operator: z
    .string()
    .regex(/^[a-z_]{1,40}$/)
    .describe(
      'How the property compares with value, as CleverTap names it: equals, contains, greater_than, less_than, …',
    ),
  value: z.union([z.string().max(500), z.number(), z.boolean()]).optional(),
});
const eventProperties = z
  .array(propertyFilter)
  .max(10)
  .optional()
  .describe('Only count events whose properties match all of these filters.');

type Json = Record<string, unknown>;

/** A finished count, or how to collect it. */
async function countQuery(
  ctx: Parameters<typeof projectFor>[0],
  tool: string,
  path: string,
  a: { project?: string | undefined; reqId?: string | undefined },
  body: Json,
  action: string,
  shape: (data: Answer, p: Project) => Json,
): Promise<Json> {
  const p = projectFor(ctx, a.project);
  const outcome = await runQuery(ctx, p, path, body, a.reqId, action);
  if (!outcome.done) return stillRunning(tool, p, outcome);
  return { project: shown(p), ...shape(outcome.data, p) };
}

const countOf = (data: Answer): number | null => (typeof data['count'] === 'number' ? data['count'] : null);

export const getEventCount = defineTool({
  description:
    'Count how many times an event happened (e.g. purchases, "Charged", app launches) in a CleverTap project between two dates, optionally only events whose properties match filters. Returns the count; when CleverTap is still computing it, returns status "running" and a reqId: call again with the same arguments plus reqId to collect it.',
  input: z.object({ project, eventName, ...dateRange, eventProperties, reqId }),
  annotations: reads('Count events'),
  handler: (ctx, a) =>
    countQuery(
      ctx,
      'clevertap_get_event_count',
      '/counts/events.json',
      a,
      { event_name: a.eventName, ...rangeOf(a), ...(a.eventProperties ? { event_properties: a.eventProperties } : {}) },
      `count the "${a.eventName}" events`,
      (data) => ({ eventName: a.eventName, from: a.from, to: a.to, count: countOf(data) }),
    ),
});

export const getProfileCount = defineTool({
  description:
    'Count the user profiles (unique users) in a CleverTap project that did an event between two dates, optionally only for events whose properties match filters. Returns the count, or status "running" with a reqId to collect it by calling again with the same arguments plus reqId.',
  input: z.object({ project, eventName, ...dateRange, eventProperties, reqId }),
  annotations: reads('Count profiles'),
  handler: (ctx, a) =>
    countQuery(
      ctx,
      'clevertap_get_profile_count',
      '/counts/profiles.json',
      a,
      { event_name: a.eventName, ...rangeOf(a), ...(a.eventProperties ? { event_properties: a.eventProperties } : {}) },
      `count the profiles that did "${a.eventName}"`,
      (data) => ({ eventName: a.eventName, from: a.from, to: a.to, count: countOf(data) }),
    ),
});

const TRENDS = ['daily', 'weekly', 'monthly'] as const;

/** A trend's `{period: value}` as a list in period order. */
function series(data: Answer, key: string, valueName: string): Array<Record<string, unknown>> {
  const points = data[key];
  if (typeof points !== 'object' || points === null || Array.isArray(points)) return [];
  return Object.entries(points as Record<string, unknown>)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([period, value]) => ({ period, [valueName]: value }));
}

export const getEventTrends = defineTool({
  description:
    'The trend of an event in a CleverTap project over a date range: its count per day, week and/or month, or the number of unique users per period (unique), or the sum of a numeric event property per period (e.g. revenue from "Amount" of "Charged"). Returns one series per period type; status "running" with a reqId means call again with the same arguments plus reqId.',
  input: z.object({
    project,
    eventName,
    ...dateRange,
    periods: z.array(z.enum(TRENDS)).min(1).max(3).default(['daily']).describe('Which trends to return.'),
    unique: z.boolean().default(false).describe('Count unique users (profiles) per period instead of events.'),
    sumEventProperty: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe('Sum this numeric event property per period instead of counting (e.g. "Amount").'),
    reqId,
  }),
  annotations: reads('Event trends'),
  handler: (ctx, a) => {
    const periods = [...new Set(a.periods)];
    return countQuery(
      ctx,
      'clevertap_get_event_trends',
      '/counts/trends.json',
      a,
      {
        event_name: a.eventName,
        ...rangeOf(a),
        unique: a.unique,
        ...(a.sumEventProperty ? { sum_event_prop: a.sumEventProperty } : {}),
        groups: Object.fromEntries(periods.map((t) => [t, { trend_type: t }])),
      },
      `read the trend of "${a.eventName}"`,
      (data) => ({
        eventName: a.eventName,
        from: a.from,
        to: a.to,
        measure: a.sumEventProperty ? `sum of ${a.sumEventProperty}` : a.unique ? 'unique users' : 'events',
        trends: Object.fromEntries(periods.map((t) => [t, series(data, t, 'value')])),
      }),
    );
  },
});

/** A daily unique-users trend of one of CleverTap's system events. */
function dailyUsersOf(tool: string, event: string, title: string, valueName: string, description: string) {
  return defineTool({
    description,
    input: z.object({ project, ...dateRange, reqId }),
    annotations: reads(title),
    handler: (ctx, a) =>
      countQuery(
        ctx,
        tool,
        '/counts/trends.json',
        a,
        { event_name: event, ...rangeOf(a), unique: true, groups: { daily: { trend_type: 'daily' } } },
        `read the daily "${event}" users`,
        (data) => ({ event, from: a.from, to: a.to, days: series(data, 'daily', valueName) }),
      ),
  });
}

export const getDailyActiveUsers = dailyUsersOf(
  'clevertap_get_daily_active_users',
  'App Launched',
  'Daily active users',
  'users',
  'Daily active users (DAU) of a CleverTap project: the number of unique users who launched the app ("App Launched") on each day of a date range. Status "running" with a reqId means call again with the same arguments plus reqId.',
);

export const getUninstallReport = dailyUsersOf(
  'clevertap_get_uninstall_report',
  'App Uninstalled',
  'Uninstalls per day',
  'uninstalls',
  'Uninstall report of a CleverTap project: how many users uninstalled the app ("App Uninstalled") on each day of a date range. Status "running" with a reqId means call again with the same arguments plus reqId.',
);

const PROPERTY_TYPES = [
  'event_properties',
  'session_properties',
  'profile_fields',
  'app_fields',
  'demographics',
  'technographics',
  'reachability',
  'geo_fields',
] as const;

export const getTopPropertyCounts = defineTool({
  description:
    'The most (or least) frequent values of properties among the events of one kind in a CleverTap project over a date range — e.g. the top products bought ("Charged" by event property "Product"), the top cities or platforms of the users who did it. Returns the counts per value for each property asked; status "running" with a reqId means call again with the same arguments plus reqId.',
  input: z.object({
    project,
    eventName,
    ...dateRange,
    properties: z
      .array(
        z.object({
          name: z.string().min(1).max(200).describe('The property, e.g. "Product", "Customer Type", "City".'),
          type: z.enum(PROPERTY_TYPES).default('event_properties').describe('Where the property lives.'),
          top: z.int().min(1).max(100).default(10).describe('How many values to return.'),
          order: z.enum(['desc', 'asc']).default('desc').describe('desc: most frequent first; asc: least frequent.'),
        }),
      )
      .min(1)
      .max(10),
    reqId,
  }),
  annotations: reads('Top property values'),
  handler: (ctx, a) => {
    const keys = a.properties.map((_, i) => `p${i + 1}`);
    return countQuery(
      ctx,
      'clevertap_get_top_property_counts',
      '/counts/top.json',
      a,
      {
        event_name: a.eventName,
        ...rangeOf(a),
        groups: Object.fromEntries(
          a.properties.map((p, i) => [keys[i], { property_type: p.type, name: p.name, top_n: p.top, order: p.order }]),
        ),
      },
      `read the top property values of "${a.eventName}"`,
      (data) => ({
        eventName: a.eventName,
        from: a.from,
        to: a.to,
        properties: a.properties.map((p, i) => ({
          name: p.name,
          type: p.type,
          counts: data[keys[i]] ?? null,
        })),
      }),
    );
  },
});

export const getRealTimeCounts = defineTool({
  description:
    'How many users are active right now in a CleverTap project (real-time counts), optionally split by user type (new or returning).',
  input: z.object({
    project,
    byUserType: z.boolean().default(false).describe('Split the count by user type.'),
  }),
  annotations: reads('Real-time counts'),
  handler: async (ctx, a) => {
    const p = projectFor(ctx, a.project);
    const { data } = await call(ctx, p, 'POST', '/now.json', 'read the real-time counts', {
      body: a.byUserType ? { user_type: true } : {},
    });
    return { project: shown(p), ...withoutStatus(data) };
  },
});
