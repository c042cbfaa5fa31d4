/**
 * @module plugins/clevertap/src/args
 * The arguments the CleverTap tools share (the project, the event, the date range, the id of a
 * running query, a cursor), and the dates as CleverTap takes them: YYYYMMDD.
 */
import { z } from 'workbench/plugin-sdk';

export const project = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .describe(
    "The project's name or account id (clevertap_list_projects lists them); default the connection's default project, else its first.",
  );

export const eventName = z
  .string()
  .min(1)
  .max(200)
  .describe('The event\'s name as CleverTap records it, e.g. "Charged", "App Launched", "Product Viewed".');

const DATE = /^\d{4}-?\d{2}-?\d{2}$/;
const date = (what: string) =>
  z.string().regex(DATE).describe(`${what} of the date range (inclusive), as YYYYMMDD or YYYY-MM-DD, e.g. "20260601".`);
export const dateRange = { from: date('First day'), to: date('Last day') };

export const reqId = z
  .string()
  .regex(/^\d{1,30}$/)
  .optional()
  .describe(
    'The reqId a previous call of this tool returned with status "running" (with the same other arguments): collects that query\'s result instead of starting a new one.',
  );

export const cursor = z
  .string()
  .min(1)
  .max(4000)
  .optional()
  .describe('The `next` cursor of the previous call (with the same other arguments): reads the following records.');

/** A YYYYMMDD date as the number CleverTap's count and cursor APIs take; a bad date is refused by name. */
export function dayNumber(value: string, name: string): number {
  const digits = value.replace(/-/g, '');
  const y = Number(digits.slice(0, 4));
  const m = Number(digits.slice(4, 6));
  const d = Number(digits.slice(6, 8));
  const real = new Date(Date.UTC(y, m - 1, d));
  if (real.getUTCFullYear() !== y || real.getUTCMonth() !== m - 1 || real.getUTCDate() !== d)
    throw new Error(`${name} "${value}" is not a date: write it as YYYYMMDD, e.g. "20260601".`);
  return Number(digits);
}

/** `from` and `to` as numbers, `from` not after `to`. */
export function rangeOf(a: { from: string; to: string }): { from: number; to: number } {
  const from = dayNumber(a.from, 'from');
  const to = dayNumber(a.to, 'to');
  if (from > to) throw new Error(`from (${from}) is after to (${to}): swap them.`);
  return { from, to };
}
