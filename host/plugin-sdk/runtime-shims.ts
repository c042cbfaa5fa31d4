/**
 * @module host/plugin-sdk/runtime-shims
 * The modules that stand in for the SDK and for zod in a plugin's runtime bundle. Schemas are
 * needed only to write the manifest (the gateway validates arguments before a handler runs), so
 * `plugin.js` gets a tiny inert `z` instead of zod, and `definePlugin` becomes name → handler.
 */

/** Runtime `definePlugin`/`defineTool`: the default export of plugin.js maps tool name → handler. */
export const RUNTIME_SDK_SOURCE = `export { z } from "zod";
export const TOOL_MARK = "workbench.tool/1";
export const PLUGIN_MARK = "workbench.plugin/1";
export function defineTool(spec) {
  return spec;
}
export function definePlugin(spec) {
  const handlers = {};
  for (const name of Object.keys(spec.tools)) handlers[name] = spec.tools[name].handler;
  return handlers;
}
`;

/** Methods that would run zod at call time: they fail loudly instead of passing silently. */
const RUNTIME_USES = [
  'parse',
  'safeParse',
  'parseAsync',
  'safeParseAsync',
  'spa',
  'decode',
  'encode',
  'safeDecode',
  'safeEncode',
  'decodeAsync',
  'encodeAsync',
  'safeDecodeAsync',
  'safeEncodeAsync',
  'check',
];

/**
 * An inert `z`: every property and call returns itself, so schema-building code at module level
 * costs nothing; a parse at run time throws an error naming `--keep-zod`. Exports every name the
 * real zod exports (unused ones are dropped by tree shaking).
 */
export function zodStubSource(exportNames: readonly string[]): string {
  const names = [...new Set(exportNames)].filter((n) => /^[A-Za-z_$][\w$]*$/.test(n) && n !== 'default').sort();
  const uses = RUNTIME_USES.filter((n) => names.includes(n));
  return `const runtimeUses = new Set(${JSON.stringify(RUNTIME_USES)});
const handler = {
  get(target, key) {
    if (key === Symbol.toPrimitive) return () => "[zod schema]";
    if (typeof key !== "string" || key === "then") return undefined;
    if (runtimeUses.has(key)) return () => {
      throw new Error("zod." + key + " cannot run: zod was left out of plugin.js (schemas are build-time only). Build with --keep-zod to use zod at run time.");
    };
    return schema;
  },
  apply() {
    return schema;
  },
  construct() {
    return schema;
  }
};
const schema = new Proxy(function zodSchema() {}, handler);
${uses.map((n) => `const use_${n} = (...args) => schema.${n}(...args);`).join('\n')}
export { schema as default, ${names.map((n) => `${uses.includes(n) ? `use_${n}` : 'schema'} as ${n}`).join(', ')} };
`;
}
