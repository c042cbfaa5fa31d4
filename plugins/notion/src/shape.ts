/**
 * @module plugins/notion/src/shape
 * Pages and databases as the tools return them: id, title, link, parent, last edit.
 */
import type { Json } from './api.js';
import { readProperties, titleOfPage } from './properties.js';
import { plain } from './text.js';

/** Where a page, database or block sits: `{type, id}`, or `{type: "workspace"}`. */
export function parentOf(p: unknown): Json | null {
  if (!p || typeof p !== 'object') return null;
  const { type } = p as Json;
  if (type === 'workspace') return { type: 'workspace' };
  const id = (p as Json)[String(type)];
  return { type, id: typeof id === 'string' ? id : null };
}

/** A page or a database, slim. */
export function slimItem(x: Json) {
  const title = x['object'] === 'database' ? plain(x['title']) : titleOfPage(x);
  const archived = !!(x['archived'] || x['in_trash']);
  return {
    id: x['id'],
    object: x['object'],
    title,
    url: x['url'] ?? null,
    parent: parentOf(x['parent']),
    lastEdited: x['last_edited_time'] ?? null,
    archived,
  };
}

/** A database row: its properties in readable form. */
export const slimRow = (x: Json) => ({
  id: x['id'],
  url: x['url'] ?? null,
  lastEdited: x['last_edited_time'] ?? null,
  properties: readProperties(x['properties']),
});
