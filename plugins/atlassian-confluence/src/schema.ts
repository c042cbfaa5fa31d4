/**
 * @module plugins/atlassian-confluence/src/schema
 * Argument schemas that several tools share.
 */
import { z } from 'workbench/plugin-sdk';

export const pageId = (description: string) =>
  z
    .string()
    .regex(/^[0-9]{1,20}$/)
    .describe(description);

export const space = (description: string) =>
  z
    .string()
    .regex(/^~?[A-Za-z0-9_:.-]{1,255}$/)
    .describe(description);

export const limit = (max: number, dflt: number, description: string) =>
  z.int().min(1).max(max).default(dflt).describe(description);

export const cursor = z.string().max(2000).optional().describe('The `next` value of the previous page.');

export const bodyFormat = (description = '`markdown`, `text` or `storage` (XHTML).') =>
  z.enum(['markdown', 'text', 'storage']).default('markdown').describe(description);
