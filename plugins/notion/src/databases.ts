/**
 * @module plugins/notion/src/databases
 * A database's rows, filtered and sorted with Notion's own JSON, checked for shape before it is sent.
 */
import { defineTool, path, reads, z } from 'workbench/plugin-sdk';
import { nextOf, notion, results, type Json } from './api.js';
import { cursor, jsonObject, limit, ref } from './fields.js';
import { parseId } from './ids.js';
import { slimRow } from './shape.js';

const isObject = (x: unknown): x is Json => !!x && typeof x === 'object' && !Array.isArray(x);

function checkFilter(f: unknown): void {
  if (!isObject(f))
    throw new Error(
      '`filter` must be a Notion filter object, such as {"property": "Status", "status": {"equals": "Done"}} or {"and": [ … ]}.',
    );
  const keys = Object.keys(f);
  const ok =
    Object.hasOwn(f, 'property') ||
    Object.hasOwn(f, 'timestamp') ||
    (keys.length === 1 && (keys[0] === 'and' || keys[0] === 'or') && Array.isArray(f[keys[0]]));
  if (!ok)
    throw new Error(
      '`filter` must name a `property` (or `timestamp`) and a condition, or be {"and": [...]} / {"or": [...]} of such filters.',
    );
}

function checkSorts(sorts: unknown[]): void {
  for (const s of sorts) {
    if (!isObject(s) || !(typeof s['property'] === 'string' || typeof s['timestamp'] === 'string')) {
      throw new Error(
        'Each sort must be {"property": "<name>", "direction": "ascending"|"descending"} or {"timestamp": "created_time"|"last_edited_time", "direction": …}.',
      );
    }
    if (s['direction'] !== undefined && s['direction'] !== 'ascending' && s['direction'] !== 'descending')
      throw new Error('A sort\'s direction is "ascending" or "descending".');
  }
}

export const queryDatabase = defineTool({
  description:
    'List the rows of a Notion database, optionally filtered and sorted; each row with its id, link and properties in readable form. `filter` and `sorts` are Notion\'s own JSON (e.g. {"property": "Status", "status": {"equals": "Done"}}, {"and": [...]}; sorts [{"property": "Due", "direction": "ascending"}]). When `next` is not null, pass it as `cursor` for the next page. Use notion_search to find the database, notion_get_page for one row\'s content.',
  annotations: reads('Query a Notion database'),
  input: z.object({
    database: ref.describe('Link or id of the database.'),
    filter: jsonObject(4).optional().describe('A Notion database filter object.'),
    sorts: z.array(jsonObject(2)).max(10).optional().describe('Notion sort objects, applied in order.'),
    limit: limit(25, 'Rows'),
    cursor,
  }),
  handler: async (ctx, args) => {
    const id = parseId(args.database, 'database');
    const body: Json = { page_size: args.limit };
    if (args.filter !== undefined) {
      checkFilter(args.filter);
      body['filter'] = args.filter;
    }
    if (args.sorts !== undefined) {
      checkSorts(args.sorts);
      body['sorts'] = args.sorts;
    }
    if (args.cursor) body['start_cursor'] = args.cursor;
    const list = await notion(ctx, 'POST', path`/databases/${id}/query`, { body, action: `query database ${id}` });
    return { database: id, rows: results(list).map(slimRow), next: nextOf(list) };
  },
});
