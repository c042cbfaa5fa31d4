/**
 * @module host/plugin-sdk/to-manifest
 * Turns a plugin definition into manifest data: each tool's zod schema becomes JSON Schema
 * (`io: 'input'`, so defaults and descriptions stay; no `$schema`). Evaluated at build time only,
 * inside the throwaway context that `workbench plugin build` runs the author's plugin.ts in.
 */
import * as z from 'zod';
import { PLUGIN_MARK, TOOL_MARK } from './define.js';

/** A problem with the definition, reported by the build as `plugin.ts: <message>`. */
export class DefinitionError extends Error {
  override name = 'DefinitionError';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * JSON Schema of a tool's arguments. A `z.object` (which would strip unknown keys) is published
 * with `additionalProperties: false`, so an agent's misspelt argument is refused with a clear error
 * instead of being dropped silently; `z.looseObject` keeps accepting unknown keys.
 */
export function inputJsonSchema(toolName: string, input: unknown): Record<string, unknown> {
  if (!(input instanceof z.ZodObject)) throw new DefinitionError(`tool "${toolName}": input must be a zod object schema, e.g. z.object({ … })`);
  let schema: Record<string, unknown>;
  try {
    schema = z.toJSONSchema(input, { io: 'input' }) as Record<string, unknown>;
  } catch (err) {
    throw new DefinitionError(`tool "${toolName}": input cannot be expressed as JSON Schema: ${(err as Error).message}`);
  }
  const { $schema: _ignored, ...rest } = schema;
  if (!('additionalProperties' in rest)) rest['additionalProperties'] = false;
  return rest;
}

/** The manifest object for a definition, keys in the documented order. */
export function pluginManifest(def: unknown): Record<string, unknown> {
  if (!isObject(def) || def['kind'] !== PLUGIN_MARK)
    throw new DefinitionError('the default export is not a plugin: end plugin.ts with `export default definePlugin({ … })`');
  const tools = def['tools'];
  if (!isObject(tools) || Object.keys(tools).length === 0) throw new DefinitionError('tools: define at least one tool');
  const manifest: Record<string, unknown> = {
    name: def['name'],
    version: def['version'],
    displayName: def['displayName'],
    description: def['description'],
    auth: def['auth'],
    egress: def['egress'] ?? [],
    tools: Object.entries(tools).map(([name, tool]) => {
      if (!isObject(tool) || tool['kind'] !== TOOL_MARK) throw new DefinitionError(`tool "${name}": define it with defineTool({ … })`);
      if (typeof tool['handler'] !== 'function') throw new DefinitionError(`tool "${name}": handler must be an async function (ctx, args) => result`);
      return {
        name,
        description: tool['description'],
        inputSchema: inputJsonSchema(name, tool['input']),
        ...(tool['annotations'] !== undefined ? { annotations: tool['annotations'] } : {}),
      };
    }),
  };
  return manifest;
}
