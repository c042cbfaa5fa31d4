/**
 * @module plugins/notion/src/pages
 * Finding, reading, creating and changing pages (a database row is a page too), and appending
 * content to a page or block.
 */
import { changes, defineTool, path, reads, z, type PluginContext } from 'workbench/plugin-sdk';
import { nextOf, notion, results, statusOf, type Json } from './api.js';
import { batches, blockLine, contentBlocks } from './blocks.js';
import { appendAll, MAX_LINE, readContent } from './content.js';
import { cursor, limit, propertyValues, ref, title } from './fields.js';
import { answerId, parseId } from './ids.js';
import { readProperties, setTitle, toProperties } from './properties.js';
import { parentOf, slimItem } from './shape.js';
import { richText, shorten } from './text.js';

export const search = defineTool({
  description:
    "Search the Notion pages and databases shared with the connection by title (most recently edited first); leave `query` empty to list them. Returns id, object (page or database), title, link, parent and last edit time. When `next` is not null, pass it as `cursor` for the next page. Use notion_get_page to read a page, notion_query_database to list a database's rows.",
  annotations: reads('Search Notion pages and databases'),
  input: z.object({
    query: z.string().max(500).optional().describe('Words in the title; empty lists everything shared.'),
    type: z.enum(['page', 'database']).optional().describe('Only pages or only databases.'),
    limit: limit(20, 'Results'),
    cursor,
  }),
  handler: async (ctx, args) => {
    const body: Json = { page_size: args.limit };
    if (args.query) body['query'] = args.query;
    if (args.type) body['filter'] = { property: 'object', value: args.type };
    if (args.cursor) body['start_cursor'] = args.cursor;
    body['sort'] = { timestamp: 'last_edited_time', direction: 'descending' };
    const list = await notion(ctx, 'POST', '/search', {
      body,
      action: args.query ? `search for "${args.query}"` : 'search',
    });
    return { results: results(list).map(slimItem), next: nextOf(list) };
  },
});

/** The content of a page or block, unless content=false; `notes` say what was left out. */
async function withContent<T extends object>(ctx: PluginContext, id: string, out: T, content: boolean) {
  if (!content) return out;
  const read = await readContent(ctx, id);
  return { ...out, content: read.content, ...(read.notes.length ? { notes: read.notes } : {}) };
}

/** A block id given as `page` (a toggle, column or callout with nested content): the block and what is below it. */
async function getBlock(ctx: PluginContext, id: string, content: boolean, pageError: unknown) {
  let b: Json;
  try {
    b = await notion(ctx, 'GET', path`/blocks/${id}`, { action: `read block ${id}` });
  } catch (err) {
    throw statusOf(err) === 404 ? pageError : err;
  }
  const type = typeof b['type'] === 'string' ? b['type'] : null;
  const text = shorten(blockLine(b, 1), MAX_LINE);
  const out = {
    id,
    object: 'block',
    type,
    text,
    parent: parentOf(b['parent']),
    lastEdited: b['last_edited_time'] ?? null,
    archived: !!(b['archived'] || b['in_trash']),
  };
  return withContent(ctx, id, out, content);
}

export const getPage = defineTool({
  description:
    'Read one Notion page: its title, link, parent, properties in readable form (text, select and status names, dates, people, checkboxes, numbers, relation ids …) and its content as markdown-ish text (headings, lists, to-dos, code, quotes, callouts, toggles; child pages and databases named with their ids; nested blocks read a few levels deep; cut at 50,000 characters, with `notes` saying what was left out). Also reads a database row (a row is a page), and a block with nested content (a toggle, column or callout): give the block id from a "(nested content not read: block …)" line. Set content=false for the properties only.',
  annotations: reads('Read a Notion page'),
  input: z.object({
    page: ref.describe(
      "The page's Notion link or id (32 hex digits, with or without dashes); a block id reads that block's nested content.",
    ),
    content: z.boolean().default(true).describe("Also read the page's content."),
  }),
  handler: async (ctx, args) => {
    const id = parseId(args.page, 'page');
    let page: Json;
    try {
      page = await notion(ctx, 'GET', path`/pages/${id}`, { action: `read page ${id}` });
    } catch (err) {
      // not a page: perhaps a block with nested content (its id is in a "(nested content not read: block …)" line)
      if (statusOf(err) === 404) return getBlock(ctx, id, args.content, err);
      throw err;
    }
    return withContent(
      ctx,
      id,
      { ...slimItem(page), createdTime: page['created_time'] ?? null, properties: readProperties(page['properties']) },
      args.content,
    );
  },
});

/** A page's or database's property schema: name → {type, …}. */
const schemaOf = (x: Json): Json =>
  x['properties'] && typeof x['properties'] === 'object' ? (x['properties'] as Json) : {};

export const createPage = defineTool({
  description:
    'Create a Notion page: a sub-page under a page (`parentPage`, with a title), or a new row in a database (`database`, with `title` and/or `properties` given as simple values: text, numbers, option names, dates as "2025-03-01", true/false, lists of names or ids; converted by the database\'s property types). `content` is markdown-ish text turned into blocks (# headings, - bullets, 1. numbers, - [ ] to-dos, > quotes, ``` code, ---). Returns the new page\'s id and link. Use notion_append_content to add to an existing page.',
  annotations: changes('Create a Notion page'),
  input: z.object({
    parentPage: ref.optional().describe('Link or id of the page to create the sub-page under.'),
    database: ref.optional().describe('Link or id of the database to add the row to.'),
    title: title('The page title.'),
    properties: propertyValues(
      'Database rows only: property name → simple value, e.g. {"Status": "In progress", "Tags": ["a", "b"], "Due": "2025-03-01"}.',
    ),
    content: z.string().max(200000).optional().describe('The page body as markdown-ish text.'),
  }),
  handler: async (ctx, args) => {
    if ([args.parentPage, args.database].filter(Boolean).length !== 1)
      throw new Error('Give exactly one of parentPage (create a sub-page) or database (add a row to a database).');
    const blocks = args.content ? contentBlocks(args.content) : [];
    let body: Json;
    if (args.parentPage) {
      if (args.properties)
        throw new Error('`properties` only apply to a page in a database; a sub-page of a page has only a title.');
      if (!args.title) throw new Error('Give the `title` of the new page.');
      body = {
        parent: { page_id: parseId(args.parentPage, 'parentPage') },
        properties: { title: { title: richText(args.title) } },
      };
    } else {
      const db = parseId(args.database, 'database');
      const schema = schemaOf(
        await notion(ctx, 'GET', path`/databases/${db}`, { action: `read the properties of database ${db}` }),
      );
      const properties = toProperties(args.properties || {}, schema);
      if (args.title !== undefined) setTitle(properties, schema, args.title, 'database');
      body = { parent: { database_id: db }, properties: Object.fromEntries(properties) };
    }
    const parts = batches(blocks);
    if (parts.length) body['children'] = parts[0];
    const page = await notion(ctx, 'POST', '/pages', { body, action: 'create the page' });
    const first = parts.length ? parts[0].length : 0;
    if (parts.length < 2) return { ...slimItem(page), blocks: first };
    // the id of the page just made goes into the next paths: only when it is a Notion id
    const pageId = answerId(page['id']);
    const where = `The page ${pageId || '(id not given)'}${typeof page['url'] === 'string' ? ` (${page['url']})` : ''} was created with blocks 1–${first} of ${blocks.length}`;
    if (!pageId)
      throw new Error(
        `${where}, but Notion's answer did not give a usable page id, so the rest was not added: find the page and add the rest with notion_append_content.`,
      );
    let written: number;
    try {
      written = await appendAll(ctx, pageId, parts.slice(1), first, blocks.length);
    } catch (err) {
      const { done, message } = err as { done?: unknown; message?: unknown };
      const upTo = typeof done === 'number' ? done : first;
      throw new Error(
        `${where}${upTo > first ? ` and blocks ${first + 1}–${upTo} were added` : ''}, but adding the rest failed: ${String(message)} Continue with notion_append_content on page ${pageId}, from block ${upTo + 1}.`,
      );
    }
    return { ...slimItem(page), blocks: written };
  },
});

export const appendContent = defineTool({
  description:
    'Add text to the end of a Notion page (or inside a block such as a toggle): markdown-ish text turned into blocks (# headings, - bullets, 1. numbers, - [ ] to-dos, > quotes, ``` code, ---; other lines become paragraphs). Returns how many blocks were added. Existing content is left as it is. Use notion_create_page for a new page.',
  annotations: changes('Append to a Notion page'),
  input: z.object({
    page: ref.describe('Link or id of the page (or block) to append to.'),
    content: z.string().min(1).max(200000).describe('The text to add.'),
  }),
  handler: async (ctx, args) => {
    const id = parseId(args.page, 'page');
    const blocks = contentBlocks(args.content);
    if (!blocks.length) throw new Error('`content` makes no blocks: give some text.');
    return { page: id, blocks: await appendAll(ctx, id, batches(blocks), 0, blocks.length) };
  },
});

export const updatePage = defineTool({
  description:
    "Change a Notion page's title or properties (simple values converted by the page's property types: text, numbers, option names for select/status, lists for multi-select, people and relations, dates, true/false; null clears), or archive it (archived=true moves it to the trash; false restores it). Returns the page with its properties after the change. Does not change content: use notion_append_content.",
  annotations: changes('Update or archive a Notion page', { destructive: true, idempotent: true }),
  input: z.object({
    page: ref.describe('Link or id of the page or database row.'),
    title: title('The new title.'),
    properties: propertyValues(
      'Property name → new simple value, e.g. {"Status": "Done", "Due": {"start": "2025-03-01", "end": "2025-03-05"}}.',
    ),
    archived: z.boolean().optional().describe('true moves the page to the trash, false restores it.'),
  }),
  handler: async (ctx, args) => {
    const id = parseId(args.page, 'page');
    const hasProps = args.properties && Object.keys(args.properties).length > 0;
    if (!hasProps && args.title === undefined && args.archived === undefined)
      throw new Error('Nothing to update: give properties, title or archived.');
    const body: { properties?: Json; in_trash?: boolean } = {};
    if (hasProps || args.title !== undefined) {
      const schema = schemaOf(await notion(ctx, 'GET', path`/pages/${id}`, { action: `read page ${id}` }));
      const properties = toProperties(args.properties || {}, schema);
      if (args.title !== undefined) setTitle(properties, schema, args.title, 'page');
      body.properties = Object.fromEntries(properties);
    }
    // `in_trash` (accepted by every API version; `archived` is its deprecated alias, removed in 2026-03-11)
    if (args.archived !== undefined) body.in_trash = args.archived;
    const page = await notion(ctx, 'PATCH', path`/pages/${id}`, { body, action: `update page ${id}` });
    const updated = [...Object.keys(body.properties || {}), ...(args.archived !== undefined ? ['archived'] : [])];
    return { ...slimItem(page), properties: readProperties(page['properties']), updated };
  },
});
