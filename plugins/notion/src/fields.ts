/**
 * @module plugins/notion/src/fields
 * The arguments several Notion tools share, with the words an agent reads for them.
 */
import { z } from 'workbench/plugin-sdk';

/** A Notion link or id (parsed in the handler: ids.ts). */
export const ref = z.string().min(32).max(2000);
export const cursor = z.string().min(1).max(500).optional().describe('The `next` value of the previous page.');
export const limit = (byDefault: number, what: string) =>
  z.int().min(1).max(100).default(byDefault).describe(`${what} per page.`);

/**
 * A JSON object passed on to Notion as it is, published as exactly `schema`: zod's object and
 * record types would add `properties: {}` or `propertyNames` to what an agent reads. `T` is what
 * the gateway's validation against `schema` guarantees the handler; the handler checks the rest.
 */
const jsonSchema = <T>(schema: Record<string, unknown>) => z.unknown().meta(schema) as unknown as z.ZodType<T>;

export type JsonObject = Record<string, unknown>;
export const jsonObject = (maxProperties: number) => jsonSchema<JsonObject>({ type: 'object', maxProperties });

/** Property name → simple value, converted by the property's type (properties.ts). */
const simpleValue = {
  description:
    'A simple value: text, a number, true/false, null to clear, a list of names or ids, or {"start", "end"} for a date.',
  type: ['string', 'number', 'boolean', 'null', 'array', 'object'],
  maxLength: 20000,
  maxItems: 100,
};
export const propertyValues = (words: string) =>
  jsonSchema<JsonObject>({ type: 'object', maxProperties: 50, additionalProperties: simpleValue })
    .optional()
    .describe(words);

export const title = (words: string) => z.string().min(1).max(2000).optional().describe(words);
