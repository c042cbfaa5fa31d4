/**
 * @module plugins/notion/src/properties
 * Page properties both ways: Notion's property values in readable form (a string, number,
 * boolean, array or null), and simple values turned into the shape a property's type wants, by
 * the database's (or page's) schema. Maps, so a property named "__proto__" is a key like any other.
 */
import type { Json } from './api.js';
import { parseId } from './ids.js';
import { plain, richText } from './text.js';

const obj = (x: unknown): Json => (x && typeof x === 'object' ? (x as Json) : {});
const list = (x: unknown): unknown[] => (Array.isArray(x) ? x : []);
const nameOf = (x: unknown) => (typeof obj(x)['name'] === 'string' ? (obj(x)['name'] as string) : null);
const userOf = (u: unknown) =>
  u && typeof u === 'object' ? (typeof obj(u)['name'] === 'string' ? obj(u)['name'] : (obj(u)['id'] ?? null)) : null;
const named = (x: unknown) =>
  list(x)
    .map(nameOf)
    .filter((n) => n !== null);

function dateText(d: unknown): unknown {
  const { start, end } = obj(d);
  if (!d || typeof d !== 'object' || !start) return null;
  return end ? `${String(start)} → ${String(end)}` : start;
}

/** One property value in readable form (a string, number, boolean, array or null). */
function readProperty(p: unknown): unknown {
  if (!p || typeof p !== 'object') return null;
  const prop = p as Json;
  const type = typeof prop['type'] === 'string' ? prop['type'] : '';
  const v = prop[type];
  switch (type) {
    case 'title':
    case 'rich_text':
      return plain(v);
    case 'number':
      return typeof v === 'number' ? v : null;
    case 'select':
    case 'status':
      return nameOf(v);
    case 'multi_select':
    case 'files':
      return named(v);
    case 'date':
      return dateText(v);
    case 'people':
      return list(v)
        .map(userOf)
        .filter((n) => n !== null);
    case 'checkbox':
      return !!v;
    case 'url':
    case 'email':
    case 'phone_number':
    case 'created_time':
    case 'last_edited_time':
      return typeof v === 'string' ? v : null;
    case 'created_by':
    case 'last_edited_by':
      return userOf(v);
    case 'relation':
      return list(v)
        .map((r) => obj(r)['id'] || null)
        .filter(Boolean);
    case 'unique_id': {
      const { prefix, number } = obj(v);
      return v && typeof number === 'number' ? `${prefix ? `${String(prefix)}-` : ''}${number}` : null;
    }
    case 'formula': {
      const f = obj(v);
      if (f['type'] === 'date') return dateText(f['date']);
      return f[String(f['type'])] ?? null;
    }
    case 'rollup': {
      const r = obj(v);
      if (r['type'] === 'array') return list(r['array']).map(readProperty);
      if (r['type'] === 'date') return dateText(r['date']);
      return r[String(r['type'])] ?? null;
    }
    default:
      return null;
  }
}

/** `{ "Status": "Done", … }` from a page's properties. */
export function readProperties(props: unknown): Json {
  const out = new Map<string, unknown>();
  if (props && typeof props === 'object')
    for (const name of Object.keys(props)) out.set(name, readProperty((props as Json)[name]));
  return Object.fromEntries(out);
}

/** The plain title of a page (its title property). */
export function titleOfPage(page: unknown): string {
  const props = obj(obj(page)['properties']);
  for (const name of Object.keys(props))
    if (obj(props[name])['type'] === 'title') return plain(obj(props[name])['title']);
  return '';
}

const WRITABLE =
  'title, rich_text, number, select, status, multi_select, date, checkbox, url, email, phone_number, people, relation';

/** A simple value as the property shape its type wants; `type` comes from the database's or page's schema. */
function toProperty(name: string, type: string, value: unknown): Json {
  const bad = (want: string) => new Error(`Property "${name}" is a ${type} property: give ${want}.`);
  switch (type) {
    case 'title':
    case 'rich_text': {
      if (value === null) return { [type]: [] };
      const text = typeof value === 'number' ? String(value) : value;
      if (typeof text !== 'string') throw bad('text');
      return { [type]: richText(text) };
    }
    case 'number': {
      if (value === null) return { number: null };
      const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isFinite(n)) throw bad('a number');
      return { number: n };
    }
    case 'select':
    case 'status':
      if (value === null) return { [type]: null };
      if (typeof value !== 'string' || !value) throw bad('the option name as text');
      return { [type]: { name: value } };
    case 'multi_select': {
      const arr: unknown =
        typeof value === 'string'
          ? value
              .split(',')
              .map((x) => x.trim())
              .filter(Boolean)
          : value === null
            ? []
            : value;
      if (!Array.isArray(arr) || !arr.every((x) => typeof x === 'string' && x)) throw bad('a list of option names');
      return { multi_select: arr.map((x: string) => ({ name: x })) };
    }
    case 'date': {
      if (value === null) return { date: null };
      if (typeof value === 'string' && value) return { date: { start: value } };
      const { start, end } = obj(value);
      if (value && typeof value === 'object' && !Array.isArray(value) && typeof start === 'string')
        return { date: { start, ...(typeof end === 'string' ? { end } : {}) } };
      throw bad('an ISO 8601 date ("2025-03-01" or "2025-03-01T09:00:00Z") or {"start", "end"}');
    }
    case 'checkbox':
      if (typeof value !== 'boolean') throw bad('true or false');
      return { checkbox: value };
    case 'url':
    case 'email':
    case 'phone_number':
      if (value !== null && typeof value !== 'string') throw bad('text, or null to clear it');
      return { [type]: value === '' ? null : value };
    case 'people':
    case 'relation': {
      const arr = value === null ? [] : typeof value === 'string' ? [value] : value;
      if (!Array.isArray(arr) || !arr.every((x) => typeof x === 'string'))
        throw bad(type === 'people' ? 'a list of Notion user ids' : 'a list of page ids or links');
      return { [type]: arr.map((x) => ({ id: parseId(x, name) })) };
    }
    default:
      throw new Error(
        `Property "${name}" is a ${type} property, which cannot be set through the API here (settable types: ${WRITABLE}).`,
      );
  }
}

/**
 * `values` (name → simple value) converted by `schema` (name → {type}); an unknown name is refused
 * with the known ones. A Map, so a property named "__proto__" stays a key (Object.fromEntries to send).
 */
export function toProperties(values: Json, schema: Json): Map<string, Json> {
  const out = new Map<string, Json>();
  for (const name of Object.keys(values)) {
    const type = Object.hasOwn(schema, name) ? obj(schema[name])['type'] : undefined;
    if (typeof type !== 'string') {
      const known = Object.keys(schema).slice(0, 40).join(', ');
      throw new Error(`There is no property "${name}" here. Its properties are: ${known || '(none)'}.`);
    }
    out.set(name, toProperty(name, type, values[name]));
  }
  return out;
}

/**
 * Sets the title (the schema's title property) among `properties`, given once: as `title` or as
 * that property, not both. `what` names the owner in the error ("database", "page").
 */
export function setTitle(properties: Map<string, Json>, schema: Json, title: string, what: string): void {
  const name = Object.keys(schema).find((n) => obj(schema[n])['type'] === 'title');
  if (!name) throw new Error(`This ${what} has no title property.`);
  if (properties.has(name))
    throw new Error(`Give the title once: as \`title\` or as the "${name}" property, not both.`);
  properties.set(name, { title: richText(title) });
}
