/**
 * @module plugins/slack/src/schema
 * Argument schemas that several tools share.
 */
import { z } from 'workbench/plugin-sdk';

export const channel = z
  .string()
  .min(1)
  .max(100)
  .describe('Channel ID (C…, G… or D…), or a channel name such as "#general" (looked up among channels you can see).');

export const cursor = z
  .string()
  .max(500)
  .optional()
  .describe('The `next` value of a previous result, to fetch the following page.');

export const text = z
  .string()
  .min(1)
  .max(40000)
  .describe('Message text in Slack mrkdwn (*bold*, _italic_, `code`, <@U0123456789> mentions, <https://x|links>).');

/** Block Kit blocks: any JSON objects (published as `{type: "object"}` items), sent as JSON text. */
export const blocks = z
  .array(z.unknown().meta({ type: 'object' }))
  .max(50)
  .optional()
  .describe('Optional Block Kit blocks; `text` is then the notification fallback.');

/** A Slack message timestamp such as "1712345678.000100". */
export const ts = (description: string) =>
  z
    .string()
    .regex(/^\d+\.\d+$/)
    .describe(description);

/** A time bound: a Slack ts, Unix seconds or an ISO 8601 date, converted by toTs(). */
export const time = (what: string) =>
  z
    .string()
    .max(40)
    .optional()
    .describe(`${what} this time. A Slack ts, Unix seconds, or an ISO 8601 date such as 2025-01-31T09:00:00Z.`);

export const limit = (max: number, dflt: number, what: string) =>
  z.int().min(1).max(max).default(dflt).describe(`How many ${what} to return (1-${max}).`);

/** Users given by ID (U…) or email, at most `max`. */
export const users = (max: number) =>
  z.array(z.string().min(1).max(254)).min(1).max(max).describe('User IDs (U…) or email addresses.');
