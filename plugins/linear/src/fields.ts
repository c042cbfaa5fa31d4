/**
 * @module plugins/linear/src/fields
 * The arguments several Linear tools share, with the words an agent reads for them.
 */
import { z } from 'workbench/plugin-sdk';

export const team = z
  .string()
  .regex(/^[A-Za-z0-9_]{1,20}$/)
  .describe('Team key, the prefix of its issue identifiers (ENG in ENG-123); linear_list_teams lists them.');

/** An identifier like ENG-123, or the issue's UUID. */
export const issueRef = z
  .string()
  .regex(
    /^([A-Za-z0-9_]{1,20}-[0-9]{1,9}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$/,
  );
export const issue = issueRef.describe("The issue's identifier, like ENG-123 (or its UUID).");

export const limit = (byDefault: number) => z.int().min(1).max(100).default(byDefault).describe('Items per page.');
export const cursor = z
  .string()
  .min(1)
  .max(500)
  .optional()
  .describe('The `next` value of the previous page (same filters).');

/** "me", "none", an email, a UUID or a display name: one word. */
export const assignee = (words: string) => z.string().min(1).max(254).regex(/^\S+$/).optional().describe(words);
export const priority = z.int().min(0).max(4).optional().describe('0 no priority, 1 urgent, 2 high, 3 medium, 4 low.');
export const stateName = z.string().min(1).max(100);
export const labelName = z.string().min(1).max(100);
export const labelNames = (words: string) =>
  z.array(labelName).max(20).meta({ uniqueItems: true }).optional().describe(words);
export const title = z.string().min(1).max(500);
export const markdown = z.string().max(100000);
