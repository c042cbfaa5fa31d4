/**
 * @module plugins/slack/src/files
 * Files shared in Slack: listing them (contents and uploads are not covered: see README.md).
 */
import { defineTool, reads, z } from 'workbench/plugin-sdk';
import { read } from './api.js';
import { channelId, nextPage, pageArg, toTs } from './args.js';
import { channel, cursor, limit, time } from './schema.js';
import { slimFile, type RawFile } from './shape.js';

export const listFiles = defineTool({
  description:
    'List files shared in Slack (name, type, size, who shared it, when, channels, link), newest first, optionally only in one channel, by one user, of some types or within a time range. Pages with `next`.',
  input: z.object({
    channel: channel.optional(),
    user: z
      .string()
      .regex(/^[UW][A-Z0-9]+$/)
      .optional()
      .describe('Only files shared by this user ID.'),
    types: z
      .array(z.enum(['spaces', 'snippets', 'images', 'gdocs', 'zips', 'pdfs']))
      .max(6)
      .optional()
      .describe('Only these kinds of file.'),
    since: time('Only files created after'),
    until: time('Only files created before'),
    limit: limit(100, 20, 'files'),
    cursor,
  }),
  annotations: reads('List files'),
  handler: async (ctx, args) => {
    const d = await read<{ files?: RawFile[]; paging?: { page?: number; pages?: number } }>(ctx, 'files.list', {
      channel: args.channel ? await channelId(ctx, args.channel) : undefined,
      user: args.user,
      types: args.types?.length ? args.types.join(',') : undefined,
      ts_from: toTs(args.since, 'since'),
      ts_to: toTs(args.until, 'until'),
      count: args.limit || 20,
      page: pageArg(args.cursor),
    });
    return { files: (d.files || []).map(slimFile), next: nextPage(d.paging) };
  },
});
