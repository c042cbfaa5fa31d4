/**
 * @module host/connections/records-field
 * A records field of an API-key connection: a JSON list of records (several projects of one
 * provider account, each with its own id and passcode), entered as JSON text in the form or as a
 * list in an import. Each record is an object of texts with only the manifest's sub-fields, its
 * required ones filled in, and a unique key. The whole list, normalised, is the sealed secret; the
 * records without their secret sub-fields become `ctx.config[field]`, so a plugin can list and
 * choose records without ever holding a secret.
 */
import type { ApiKeyField } from '../../contracts/manifest.js';

/** A whole list as JSON text (the largest secret a form may hold). */
const MAX_LIST_CHARS = 16384;
const MAX_VALUE_CHARS = 500;

export type RecordsResult =
  { error: string } | { secret?: undefined } | { secret: string; config: Array<Record<string, string>> };

/** The list from what was submitted: JSON text, or already a list. */
function listOf(label: string, raw: unknown): unknown[] | string {
  if (Array.isArray(raw)) return raw as unknown[];
  if (typeof raw !== 'string') return `${label} must be a JSON list of records`;
  if (raw.length > MAX_LIST_CHARS) return `${label} is too long (at most ${MAX_LIST_CHARS} characters)`;
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) ? parsed : `${label} must be a JSON list of records ([{…}, {…}])`;
  } catch {
    return `${label} is not valid JSON: paste a list such as [{…}, {…}]`;
  }
}

/** One record's problem, or the record with its texts trimmed. */
function checkRecord(
  f: ApiKeyField & { records: NonNullable<ApiKeyField['records']> },
  rec: unknown,
  n: number,
): string | Record<string, string> {
  const spec = f.records;
  const where = `${f.label}: record ${n}`;
  if (typeof rec !== 'object' || rec === null || Array.isArray(rec)) return `${where} is not an object`;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(rec)) {
    if (!spec.fields.includes(k))
      return `${where} has an unknown field "${k.slice(0, 64)}" (known: ${spec.fields.join(', ')})`;
    if (v === null || v === undefined) continue;
    if (typeof v !== 'string' && typeof v !== 'number') return `${where}: "${k}" must be text`;
    const text = String(v).trim();
    if (text.length > MAX_VALUE_CHARS) return `${where}: "${k}" is too long (at most ${MAX_VALUE_CHARS} characters)`;
    if (/[\u0000-\u001f\u007f]/.test(text)) return `${where}: "${k}" contains control characters`;
    if (text !== '') out[k] = text;
  }
  for (const k of spec.required ?? spec.fields) if (out[k] === undefined) return `${where} has no "${k}"`;
  if (out[spec.key] === undefined) return `${where} has no "${spec.key}"`;
  return out;
}

/** Checks a records field's value; nothing given is an error only when the field is required. */
export function validateRecords(f: ApiKeyField, raw: unknown): RecordsResult {
  const spec = f.records;
  if (!spec) return { error: `${f.label} is not a records field` };
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === ''))
    return f.required ? { error: `${f.label} is required` } : {};
  const list = listOf(f.label, typeof raw === 'string' ? raw.trim() : raw);
  if (typeof list === 'string') return { error: list };
  if (list.length === 0) return f.required ? { error: `${f.label} needs at least one record` } : {};
  if (list.length > spec.max) return { error: `${f.label} holds at most ${spec.max} records` };
  const records: Array<Record<string, string>> = [];
  const keys = new Set<string>();
  for (const [i, rec] of list.entries()) {
    const checked = checkRecord({ ...f, records: spec }, rec, i + 1);
    if (typeof checked === 'string') return { error: checked };
    const key = checked[spec.key] as string;
    if (keys.has(key)) return { error: `${f.label}: two records have the ${spec.key} "${key.slice(0, 100)}"` };
    keys.add(key);
    records.push(checked);
  }
  const config = records.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !spec.secret.includes(k))));
  return { secret: JSON.stringify(records), config };
}
