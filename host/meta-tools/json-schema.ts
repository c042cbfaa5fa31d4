/**
 * @module host/meta-tools/json-schema
 * The JSON Schema of a meta-tool's arguments, as tools/list serves it (and get_tool_schema, for an
 * agent that asks for a meta-tool by name).
 */
import * as z from 'zod';

export function metaToolJsonSchema(schema: z.ZodObject): { type: 'object'; [k: string]: unknown } {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as {
    type: 'object';
    [k: string]: unknown;
  };
  delete json['$schema'];
  return json;
}
