/**
 * @module plugins/google-calendar/src/schema
 * Argument schemas that several tools share.
 */
import { z } from 'workbench/plugin-sdk';

export const calendarId = (description = 'Calendar id; "primary" is the user\'s own.') =>
  z.string().min(1).max(254).default('primary').describe(description);

export const eventId = (description = 'Event id.') =>
  z
    .string()
    .max(1024)
    .regex(/^[A-Za-z0-9_@.-]+$/)
    .describe(description);

export const timeZone = (description: string) => z.string().max(64).optional().describe(description);

/** A time argument: RFC 3339, a local date-time with timeZone, or a date (see time.ts). */
export const time = (description: string) => z.string().max(40).describe(description);

export const emails = (description: string) =>
  z
    .array(z.string().regex(/^[^\s@<>]+@[^\s@<>]+$/))
    .max(100)
    .optional()
    .describe(description);

export const sendUpdates = (description: string) =>
  z.enum(['all', 'externalOnly', 'none']).default('all').describe(description);

export const cursor = z.string().max(2000).optional().describe('The `next` value of the previous page.');
