/**
 * @module host/plugin-sdk/to-manifest
 * Turns a plugin definition into manifest data: each tool's zod schema becomes JSON Schema
 * (`io: 'input'`, so defaults and descriptions stay; no `$schema`). Evaluated at build time only,
 * inside the throwaway context that `workbench plugin build` runs the author's plugin.ts in.
 */
import * as z from 'zod';
import { PLUGIN_MARK, TOOL_MARK } from '../../sdk/define.js';
import { WorkbenchError } from '../../contracts/errors.js';

/** A problem with the definition, reported by the build as `plugin.ts: <message>`. */
export class DefinitionError extends WorkbenchError<'GW_ERR_PLUGIN_BUILD_FAILED'> {
  override name = 'DefinitionError';
  constructor(message: string) {
    super('GW_ERR_PLUGIN_BUILD_FAILED', message);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** zod's internals as far as the walk below reads them */
interface ZodInternals {
  def: {
    type?: string;
    checks?: Array<{ _zod?: { def?: { check?: string } } }>;
    in?: unknown;
    out?: unknown;
    getter?: () => unknown;
    [key: string]: unknown;
  };
}
const internals = (v: unknown): ZodInternals | undefined => {
  const z = isObject(v) || typeof v === 'function' ? (v as { _zod?: unknown })._zod : undefined;
  return isObject(z) && isObject((z as { def?: unknown }).def) ? (z as unknown as ZodInternals) : undefined;
};

const CONVERT_IN_HANDLER = 'take the raw value and convert it in the handler';

/**
 * The first part of a tool's input schema that JSON Schema cannot carry and the gateway would
 * therefore never apply: the manifest is written from the input side, so a `.transform()`, a
 * `.pipe()` or `z.preprocess()` would be dropped (the handler would get the raw value while its
 * type says otherwise), and so would a `.refine()`/`.superRefine()` check or a `.trim()`-like
 * change. Returns a message, or undefined.
 */
export function unrepresentable(schema: unknown, where = 'input', seen = new Set<unknown>()): string | undefined {
  const zod = internals(schema);
  if (!zod || seen.has(schema)) return undefined;
  seen.add(schema);
  const def = zod.def;
  if (def.type === 'pipe') {
    const kind =
      internals(def.in)?.def.type === 'transform'
        ? 'z.preprocess()'
        : internals(def.out)?.def.type === 'transform'
          ? '.transform()'
          : '.pipe()';
    return `${where} uses ${kind}: the manifest is written from the schema's input side, so the gateway never runs it and the handler would get the raw value, not what its type says; ${CONVERT_IN_HANDLER}`;
  }
  if (def.type === 'transform') return `${where} uses a transform: the gateway never runs it; ${CONVERT_IN_HANDLER}`;
  if ((def.checks ?? []).some((c) => c?._zod?.def?.check === 'custom'))
    return `${where} uses .refine() or .superRefine(): JSON Schema cannot carry the check, so the gateway would never run it; use a check JSON Schema has (min, max, length, regex, enum, …), or ${CONVERT_IN_HANDLER} and throw an Error naming the argument when it is wrong`;
  if ((def.checks ?? []).some((c) => c?._zod?.def?.check === 'overwrite'))
    return `${where} uses .trim(), .toLowerCase(), .toUpperCase() or .normalize(): JSON Schema cannot carry the change, so the gateway would never make it; ${CONVERT_IN_HANDLER}`;
  if (def.type === 'lazy' && typeof def.getter === 'function') return unrepresentable(def.getter(), where, seen);
  if (def.type === 'object' && isObject(def['shape'])) {
    for (const [key, value] of Object.entries(def['shape'])) {
      const found = unrepresentable(value, `${where}.${key}`, seen);
      if (found) return found;
    }
  }
  for (const [key, value] of Object.entries(def)) {
    if (key === 'shape' || key === 'checks') continue;
    const inner = Array.isArray(value) ? value : [value];
    for (const v of inner) {
      const found = unrepresentable(v, key === 'element' ? `${where}[]` : where, seen);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * JSON Schema of a tool's arguments. A `z.object` (which would strip unknown keys) is published
 * with `additionalProperties: false`, so an agent's misspelt argument is refused with a clear error
 * instead of being dropped silently; `z.looseObject` keeps accepting unknown keys.
 */
export function inputJsonSchema(toolName: string, input: unknown): Record<string, unknown> {
  if (!(input instanceof z.ZodObject))
    throw new DefinitionError(`tool "${toolName}": input must be a zod object schema, e.g. z.object({ … })`);
  const dropped = unrepresentable(input);
  if (dropped) throw new DefinitionError(`tool "${toolName}": ${dropped}`);
  let schema: Record<string, unknown>;
  try {
    schema = z.toJSONSchema(input, { io: 'input' });
  } catch (err) {
    throw new DefinitionError(
      `tool "${toolName}": input cannot be expressed as JSON Schema: ${(err as Error).message}`,
    );
  }
  const { $schema: _ignored, ...rest } = withoutSafeIntegerBounds(schema) as Record<string, unknown>;
  if (!('additionalProperties' in rest)) rest['additionalProperties'] = false;
  return rest;
}

const SAFE_INTEGER = Number.MAX_SAFE_INTEGER;

/**
 * zod publishes every `z.int()` with `minimum: -(2^53 - 1)` and `maximum: 2^53 - 1`, bounds nobody
 * wrote and that only lengthen what an agent reads: they are dropped (a bound the author set stays).
 */
function withoutSafeIntegerBounds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSafeIntegerBounds);
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const implicit =
      value['type'] === 'integer' &&
      ((key === 'minimum' && v === -SAFE_INTEGER) || (key === 'maximum' && v === SAFE_INTEGER));
    if (!implicit) out[key] = withoutSafeIntegerBounds(v);
  }
  return out;
}

/** The manifest object for a definition, keys in the documented order. */
export function pluginManifest(def: unknown): Record<string, unknown> {
  if (!isObject(def) || def['kind'] !== PLUGIN_MARK)
    throw new DefinitionError(
      'the default export is not a plugin: end plugin.ts with `export default definePlugin({ … })`',
    );
  const tools = def['tools'];
  if (!isObject(tools) || Object.keys(tools).length === 0) throw new DefinitionError('tools: define at least one tool');
  const manifest: Record<string, unknown> = {
    name: def['name'],
    version: def['version'],
    displayName: def['displayName'],
    description: def['description'],
    auth: def['auth'],
    egress: def['egress'] ?? [],
    ...(def['egressAnyPublicHost'] === undefined ? {} : { egressAnyPublicHost: def['egressAnyPublicHost'] }),
    tools: Object.entries(tools).map(([name, tool]) => {
      if (!isObject(tool) || tool['kind'] !== TOOL_MARK)
        throw new DefinitionError(`tool "${name}": define it with defineTool({ … })`);
      if (typeof tool['handler'] !== 'function')
        throw new DefinitionError(`tool "${name}": handler must be an async function (ctx, args) => result`);
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
