/**
 * @module plugins/notion/src/content
 * A page's (or block's) content: the block tree read as text within the call's request budget,
 * and blocks appended in request-sized parts.
 */
import { path, type PluginContext } from 'workbench/plugin-sdk';
import { nextOf, notion, results, statusOf, type Json } from './api.js';
import { blockLine, type Block } from './blocks.js';
import { answerId } from './ids.js';
import { cutIndex, shorten } from './text.js';

const MAX_CONTENT = 50000;
export const MAX_LINE = 4000; // one block's text in the content read is cut here
/** requests kept free after the block reads (ctx.limits.requestsLeft() counts the rest) */
const REQUEST_MARGIN = 2;
const MAX_DEPTH = 3;
const LEAF_TYPES = new Set(['child_page', 'child_database']);

/** A block read (or the root): its line, what was read below it, or why not (`state`). */
interface Node {
  id: string | null;
  line?: string;
  items: Node[] | null;
  depth: number;
  /** the number of the last numbered list item read in a row */
  n: number;
  state: string | null;
  /** more children than were read */
  more?: boolean;
}

/** A short reason for a failed nested read, for the marker and the note. */
function readFailure(err: unknown): string {
  const status = statusOf(err);
  if (status === 429) return 'Notion said 429 (rate limited), retry later';
  if (status) return `Notion said ${String(status)}`;
  const { code, message } = (err && typeof err === 'object' ? err : {}) as { code?: unknown; message?: unknown };
  return code ? `the gateway said ${String(code)}` : String(message || err).slice(0, 200);
}

/** The read tree as indented lines, with a marker where nested content was not read. */
function render(node: Node, indent: string, lines: string[]): void {
  for (const child of node.items || []) {
    if (child.line)
      lines.push(
        child.line
          .split('\n')
          .map((l) => indent + l)
          .join('\n'),
      );
    const inner = `${indent}  `;
    if (child.state === 'deep' || child.state === 'unread')
      lines.push(`${inner}(nested content not read: block ${child.id})`);
    else if (child.state) lines.push(`${inner}(nested content ${child.state}${child.id ? `: block ${child.id}` : ''})`);
    else if (child.items) render(child, inner, lines);
    if (child.more) lines.push(`${inner}(more nested content not read: block ${child.id})`);
  }
}

/**
 * The blocks under `rootId` as text: children read breadth-first, to MAX_DEPTH levels and with the
 * requests the call has left (ctx.limits.requestsLeft()) but REQUEST_MARGIN. Each answer becomes
 * lines at once (the block objects are not kept); no more reads are queued once the text passes
 * MAX_CONTENT. What was not read is named in `notes` and, where it sits, by a marker with the
 * block's id. Only the first read of the root may fail the call; a later failed read is a note.
 */
export async function readContent(ctx: PluginContext, rootId: string): Promise<{ content: string; notes: string[] }> {
  const root: Node = { id: rootId, items: [], depth: 0, n: 0, state: null };
  const queue: Array<{ node: Node; id: string; cursor?: string }> = [{ node: root, id: rootId }];
  const budget = Math.max(1, ctx.limits.requestsLeft() - REQUEST_MARGIN);
  let requests = 0;
  let size = 0;
  let unread = 0;
  let deep = 0;
  let longLines = 0;
  let badIds = 0;
  let sizeStop = false;
  let rootIncomplete = false;
  const failures: string[] = [];
  const over = () => size > MAX_CONTENT;
  for (let item = queue.shift(); item; item = queue.shift()) {
    const { node, id } = item;
    if (requests >= budget || over()) {
      if (over()) sizeStop = true;
      if (node === root) rootIncomplete = true;
      else {
        unread++;
        node.state = 'unread';
      }
      continue;
    }
    requests++;
    let list: Json;
    try {
      const action = `read the content of ${node === root ? 'page' : 'block'} ${id}`;
      list = await notion(ctx, 'GET', path`/blocks/${id}/children`, {
        query: { page_size: 100, start_cursor: item.cursor },
        action,
      });
    } catch (err) {
      if (node === root && item.cursor === undefined) throw err;
      const why = readFailure(err);
      failures.push(`block ${id}: ${why}`);
      if (node === root) rootIncomplete = true;
      else node.state = `could not be read: ${why}`;
      continue;
    }
    for (const b of results(list) as Block[]) {
      if (!b || typeof b !== 'object') continue;
      if (over()) {
        node.more = true;
        sizeStop = true;
        break;
      }
      node.n = b.type === 'numbered_list_item' ? node.n + 1 : 0;
      let line = blockLine(b, node.n);
      if (line.length > MAX_LINE) {
        line = shorten(line, MAX_LINE);
        longLines++;
      }
      const childId = answerId(b.id);
      const child: Node = { line, id: childId, items: null, depth: node.depth + 1, n: 0, state: null };
      if (b.has_children && !LEAF_TYPES.has(String(b.type))) {
        if (!childId) {
          child.state = 'not read: its id in the answer is not a Notion id';
          badIds++;
        } else if (child.depth < MAX_DEPTH) {
          child.items = [];
          queue.push({ node: child, id: childId });
        } else {
          child.state = 'deep';
          deep++;
        }
      }
      node.items?.push(child);
      size += line.length + 1 + 2 * node.depth;
    }
    const next = nextOf(list);
    if (next && !node.more) queue.unshift({ node, id, cursor: next });
  }
  if (root.more) rootIncomplete = true;
  const lines: string[] = [];
  render(root, '', lines);
  const notes: string[] = [];
  if (rootIncomplete) notes.push('The page has more blocks than one call reads: the content stops early.');
  if (unread)
    notes.push(
      `${unread} nested block(s) were not read (${sizeStop ? 'the content was already long enough' : 'request budget'}): open them with notion_get_page and the block id in their "(nested content not read …)" line.`,
    );
  if (deep)
    notes.push(
      `Content nested deeper than ${MAX_DEPTH} levels was not read: pass the nested block's id (in its "(nested content not read …)" line) to notion_get_page.`,
    );
  for (const f of failures.slice(0, 10)) notes.push(`Nested content of ${f}; the rest was read.`);
  if (failures.length > 10) notes.push(`${failures.length - 10} more nested read(s) failed.`);
  if (badIds)
    notes.push(
      `${badIds} block(s) had an id in Notion's answer that is not a Notion id: their nested content was not read.`,
    );
  if (longLines) notes.push(`${longLines} block(s) longer than ${MAX_LINE} characters were shortened (…).`);
  let content = lines.join('\n');
  if (sizeStop || content.length > MAX_CONTENT) {
    content = content.slice(0, cutIndex(content, MAX_CONTENT));
    notes.push(
      `The content was cut at ${MAX_CONTENT} characters${sizeStop ? ' (no more blocks were read past that)' : ''}.`,
    );
  }
  return { content, notes };
}

/**
 * Appends the parts to a block or page, one request each; returns how many blocks were appended.
 * A failure carries `done`, the blocks appended before it.
 */
export async function appendAll(
  ctx: PluginContext,
  id: string,
  parts: Json[][],
  already: number,
  total: number,
): Promise<number> {
  let done = already;
  for (const part of parts) {
    const action = `append blocks ${done + 1}–${done + part.length} of ${total} to ${id}${done > 0 ? ` (blocks 1–${done} were added)` : ''}`;
    try {
      await notion(ctx, 'PATCH', path`/blocks/${id}/children`, { body: { children: part }, action });
    } catch (err) {
      if (err && typeof err === 'object') (err as { done?: number }).done = done;
      throw err;
    }
    done += part.length;
  }
  return done;
}
