/**
 * @module host/plugin-sdk/strip-schemas
 * Build time, runtime bundle only: removes the zod schema expressions from a plugin's JavaScript.
 * Schemas are needed only to write the manifest (the gateway validates arguments before a handler
 * runs), but every fresh context evaluates a plugin's top level, so schema chains left in plugin.js
 * would run on every call: for a plugin with forty tools that was ~1.4 ms of CPU per call, more than
 * the fresh context itself. Each longest expression rooted at the imported `z` (a member access or
 * call chain: `z.object({…}).describe('…')`) becomes `z` itself, the inert stand-in of
 * runtime-shims.ts, and so does each chain rooted at a variable holding one (`const id =
 * z.string()…; … id.describe('…')`); a schema reached another way (a property of an object of
 * schemas) still works, through the stand-in. Handlers never use `z` at run time unless the plugin
 * is built with --keep-zod, in which case nothing is stripped.
 */
import { Parser, type Node } from 'acorn';

interface AnyNode extends Node {
  [key: string]: unknown;
}

const SCHEMA_SOURCES = /^(workbench\/plugin-sdk|zod(\/.*)?|\.{1,2}\/.*sdk(\/index(\.[jt]s)?)?)$/;

/**
 * The local names `z` is imported under (`import { z }`, `import { z as s }`, `import * as z from
 * 'zod'`), and the text that stands for a schema: the name itself, or `<namespace>.z`.
 */
function schemaNames(program: AnyNode): { names: Set<string>; stand: string | undefined } {
  const names = new Set<string>();
  let stand: string | undefined;
  for (const statement of program['body'] as AnyNode[]) {
    if (statement.type !== 'ImportDeclaration') continue;
    const source = (statement['source'] as AnyNode)['value'];
    if (typeof source !== 'string' || !SCHEMA_SOURCES.test(source)) continue;
    for (const spec of statement['specifiers'] as AnyNode[]) {
      const local = (spec['local'] as AnyNode)['name'] as string;
      if (spec.type === 'ImportSpecifier' && ((spec['imported'] as AnyNode)['name'] === 'z' || /^zod/.test(source))) {
        names.add(local);
        stand ??= local;
      }
      if (spec.type === 'ImportNamespaceSpecifier' && /^zod/.test(source)) {
        names.add(local);
        stand ??= `${local}.z`;
      }
    }
  }
  return { names, stand };
}

/** zod methods that run a schema: a chain using one is left as it is, so the stand-in throws its error. */
const RUN = new Set([
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
]);

/** True for `z`, `z.x`, `z.x(…)`, `z.x(…).y(…)`…: a chain whose root is one of `names`. */
function isSchemaChain(node: AnyNode, names: Set<string>): boolean {
  let at: AnyNode = node;
  if (at.type !== 'CallExpression' && at.type !== 'MemberExpression') return false;
  for (;;) {
    if (at.type === 'CallExpression') at = at['callee'] as AnyNode;
    else if (at.type === 'MemberExpression') {
      const property = at['property'] as AnyNode;
      if (property.type === 'Identifier' && RUN.has(property['name'] as string)) return false;
      at = at['object'] as AnyNode;
    } else return at.type === 'Identifier' && names.has(at['name'] as string);
  }
}

/** Calls `fn` on every node under `node` (not descending into imports). */
function walk(node: unknown, fn: (n: AnyNode) => boolean | void): void {
  if (Array.isArray(node)) return node.forEach((n) => walk(n, fn));
  if (typeof node !== 'object' || node === null || typeof (node as AnyNode).type !== 'string') return;
  const n = node as AnyNode;
  if (n.type === 'ImportDeclaration' || fn(n) === false) return;
  for (const [key, value] of Object.entries(n))
    if (key !== 'type' && key !== 'start' && key !== 'end' && key !== 'loc') walk(value, fn);
}

/** Adds the variables whose initial value is a schema chain, until no more are found. */
function schemaVariables(program: AnyNode, names: Set<string>): void {
  for (let grew = true; grew;) {
    grew = false;
    walk(program['body'], (n) => {
      const id = n['id'] as AnyNode | undefined;
      if (n.type !== 'VariableDeclarator' || id?.type !== 'Identifier' || names.has(id['name'] as string)) return;
      const init = n['init'] as AnyNode | null;
      if (init && (isSchemaChain(init, names) || (init.type === 'Identifier' && names.has(init['name'] as string)))) {
        names.add(id['name'] as string);
        grew = true;
      }
    });
  }
}

/** Returns `js` with every schema chain replaced by the stand-in `z` (the same text when there is none). */
export function stripSchemas(js: string): string {
  const program = Parser.parse(js, { ecmaVersion: 'latest', sourceType: 'module' }) as unknown as AnyNode;
  const { names, stand } = schemaNames(program);
  if (stand === undefined) return js;
  schemaVariables(program, names);
  const cuts: Array<[number, number]> = [];
  walk(program['body'], (n) => {
    if (!isSchemaChain(n, names)) return true;
    cuts.push([n.start, n.end]);
    return false;
  });
  let out = '';
  let from = 0;
  for (const [start, end] of cuts.sort((a, b) => a[0] - b[0])) {
    out += `${js.slice(from, start)}${stand}`;
    from = end;
  }
  return out + js.slice(from);
}
