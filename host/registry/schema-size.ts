/**
 * @module host/registry/schema-size
 * A tool's inputSchema comes from a third-party manifest, and its validator runs on the host's
 * event loop on every call. zod compiles a `$ref` once and shares it, but validation applies it
 * each time it is reached: `L1 = allOf[L0, L0]`, `L2 = allOf[L1, L1]`, … is a few KB and checks
 * 2^23 sub-schemas against one argument at depth 22 (and anyOf, given bad arguments, keeps every
 * failed branch's issues until the heap runs out). So a schema is measured as validation sees it,
 * every `$ref` replaced by its target, and refused at load above MAX_SCHEMA_EXPANSION.
 *
 * The count walks the places an argument value can sit (the root, `a`, `a[*]`, …). At each, the
 * sub-schemas that check that one value are expanded in place (`$ref`, `allOf`, `anyOf`, `oneOf`,
 * `not`, `if`/`then`/`else`, `dependentSchemas`) without sharing, so a reuse that doubles at every
 * level shows; the sub-schemas they hand down (`properties`, `items`, …) start the places below,
 * down to the deepest nesting arguments may have (MAX_ARGS_DEPTH). A place handed exactly the
 * sub-schemas of one already counted is not counted again: that is how a recursive schema
 * (`"$ref": "#"` under `items`, a tree) costs its size once, while a recursion that hands more
 * sub-schemas down at each level than it got (two `anyOf` branches recursing into the same
 * `items`) grows until it passes the limit. A `$ref` that leads back to a schema it is part of
 * without descending into a property or an item would make validation recurse without end: it is
 * refused too.
 *
 * What this bounds is the work per argument value: one value is checked by at most the sub-schemas
 * counted at its place. How many values an argument holds is bounded by `maxArgsBytes`, not here.
 */
import { MAX_ARGS_DEPTH } from '../engine/validate-args.js';

/**
 * Most sub-schemas an inputSchema may expand to. The built-in plugins' largest counts 16, and
 * schemas generated from big APIs a few thousand; at 10,000 one value is checked in 1 to 3 ms, and
 * a `$ref` used twice per level passes it after 12 levels (it took 22 to block the host for a second).
 */
export const MAX_SCHEMA_EXPANSION = 10_000;

/** A sub-schema at a place in the manifest (for messages: `inputSchema.properties.a`). */
interface Sub {
  schema: unknown;
  path: string;
  /** for a `$ref`'s target: where the `$ref` is, and what it says */
  via?: { path: string; ref: string };
}

/** A place an argument value can sit, with the sub-schemas handed to it. */
interface State {
  seeds: Sub[];
  depth: number;
  /** the argument's path, for messages: `a[*].b` */
  where: string;
}

type Schema = Record<string, unknown>;

const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);
const has = (o: Schema, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key);

const IN_PLACE_ONE = ['not', 'if', 'then', 'else'] as const;
const IN_PLACE_LIST = ['allOf', 'anyOf', 'oneOf'] as const;

/**
 * Where a `$ref` leads, resolved the way zod's fromJSONSchema resolves it (that is what validates):
 * `#` is the root, `#/$defs/<name>…` and `#/definitions/<name>…` the root's definition <name>
 * (zod ignores what follows the name). Anything else zod refuses at compile: undefined here.
 */
function resolveRef(ref: string, root: Schema): Sub | undefined {
  if (ref === '#' || ref === '#/') return { schema: root, path: 'inputSchema' };
  const segments = ref.startsWith('#/') ? ref.slice(2).split('/').filter(Boolean) : [];
  const [where, encoded] = segments;
  if ((where !== '$defs' && where !== 'definitions') || encoded === undefined) return undefined;
  const defs = root['$defs'] || root['definitions'];
  const name = encoded.replace(/~1/g, '/').replace(/~0/g, '~');
  if (!isSchema(defs) || !has(defs, name)) return undefined;
  return { schema: defs[name], path: `inputSchema.${root['$defs'] ? '$defs' : 'definitions'}.${name}` };
}

/** The sub-schemas that apply to the same value as `sub` (not counting `sub` itself). */
function inPlace(sub: Sub, root: Schema): Sub[] {
  const s = sub.schema;
  if (!isSchema(s)) return [];
  const out: Sub[] = [];
  if (typeof s['$ref'] === 'string') {
    const target = resolveRef(s['$ref'], root);
    if (target) out.push({ ...target, via: { path: sub.path, ref: s['$ref'] } });
  }
  for (const key of IN_PLACE_LIST) {
    const list = s[key];
    if (Array.isArray(list)) list.forEach((x, i) => out.push({ schema: x, path: `${sub.path}.${key}.${i}` }));
  }
  for (const key of IN_PLACE_ONE) if (has(s, key)) out.push({ schema: s[key], path: `${sub.path}.${key}` });
  const dependent = s['dependentSchemas'];
  if (isSchema(dependent))
    for (const [k, x] of Object.entries(dependent)) out.push({ schema: x, path: `${sub.path}.dependentSchemas.${k}` });
  return out;
}

/** What checking one value against `sub` alone costs: 1, or one per value of a non-string enum (zod makes it a union of literals). */
function ownCost(sub: Sub): number {
  const e = isSchema(sub.schema) ? sub.schema['enum'] : undefined;
  return Array.isArray(e) && !e.every((v) => typeof v === 'string') ? 1 + e.length : 1;
}

/** Sub-schemas of `s` that apply to the value of property `key` (undefined: a key no `properties` names). */
function forKey(s: Schema, path: string, key: string | undefined): Sub[] {
  const out: Sub[] = [];
  const props = s['properties'];
  if (key !== undefined && isSchema(props) && has(props, key))
    out.push({ schema: props[key], path: `${path}.properties.${key}` });
  else if (has(s, 'additionalProperties'))
    out.push({ schema: s['additionalProperties'], path: `${path}.additionalProperties` });
  const patterns = s['patternProperties'];
  if (isSchema(patterns))
    for (const [p, x] of Object.entries(patterns)) out.push({ schema: x, path: `${path}.patternProperties.${p}` });
  if (has(s, 'unevaluatedProperties'))
    out.push({ schema: s['unevaluatedProperties'], path: `${path}.unevaluatedProperties` });
  return out;
}

/** Sub-schemas of `s` that apply to item `index` of an array (Infinity: any item past every tuple). */
function forIndex(s: Schema, path: string, index: number): Sub[] {
  const out: Sub[] = [];
  const prefix = Array.isArray(s['prefixItems']) ? s['prefixItems'] : [];
  const items = s['items'];
  if (index < prefix.length) out.push({ schema: prefix[index], path: `${path}.prefixItems.${index}` });
  else if (Array.isArray(items)) {
    if (index < items.length) out.push({ schema: items[index], path: `${path}.items.${index}` });
    else if (has(s, 'additionalItems')) out.push({ schema: s['additionalItems'], path: `${path}.additionalItems` });
  } else if (items !== undefined) out.push({ schema: items, path: `${path}.items` });
  for (const key of ['contains', 'unevaluatedItems'])
    if (has(s, key)) out.push({ schema: s[key], path: `${path}.${key}` });
  return out;
}

type Applied = Sub & { schema: Schema };

/**
 * The places below a value that `applied` (the object sub-schemas checking it) hand sub-schemas to:
 * one per property name they know, one for any other name, one per tuple position, one for any
 * other item, one for property names. Yields them one at a time, so that a caller past its budget
 * stops before the rest is built.
 */
function* children(applied: Applied[], state: State): Generator<State> {
  const depth = state.depth + 1;
  const at = (suffix: string): string => (state.where === '' ? suffix.replace(/^\./, '') : state.where + suffix);
  const naming = new Map<string, Applied[]>();
  const wild: Applied[] = [];
  let tuple = 0;
  for (const a of applied) {
    const props = a.schema['properties'];
    if (isSchema(props))
      for (const k of Object.keys(props)) {
        const list = naming.get(k);
        if (list) list.push(a);
        else naming.set(k, [a]);
      }
    if (
      has(a.schema, 'additionalProperties') ||
      has(a.schema, 'patternProperties') ||
      has(a.schema, 'unevaluatedProperties')
    )
      wild.push(a);
    for (const key of ['prefixItems', 'items'])
      if (Array.isArray(a.schema[key])) tuple = Math.max(tuple, (a.schema[key] as unknown[]).length);
  }
  for (const [k, named] of naming) {
    const own = new Set(named);
    const from = [...named, ...wild.filter((a) => !own.has(a))];
    yield { seeds: from.flatMap((a) => forKey(a.schema, a.path, k)), depth, where: at(`.${k}`) };
  }
  if (wild.length > 0)
    yield { seeds: wild.flatMap((a) => forKey(a.schema, a.path, undefined)), depth, where: at('.*') };
  for (let i = 0; i <= tuple; i++) {
    const index = i < tuple ? i : Infinity;
    yield {
      seeds: applied.flatMap((a) => forIndex(a.schema, a.path, index)),
      depth,
      where: at(i < tuple ? `[${i}]` : '[*]'),
    };
  }
  const names = applied
    .filter((a) => has(a.schema, 'propertyNames'))
    .map((a) => ({ schema: a.schema['propertyNames'], path: `${a.path}.propertyNames` }));
  yield { seeds: names, depth, where: at(' (a property name)') };
}

function tooLarge(path: string, where: string, limit: number): string {
  const argument = where === '' ? 'the arguments object' : `the argument ${where}`;
  return `${path}: expands to more than ${limit} sub-schemas once every "$ref" is replaced by the schema it points to (the count passed ${limit} at the sub-schemas checking ${argument}): too many to check on every call; reuse $defs less under anyOf, oneOf and allOf`;
}

/**
 * The most sub-schemas one argument value is checked against, at any one place (those handed to it
 * and all they lead to in place: an `anyOf` of 1,000 options under `items` counts 1,001 for each
 * element); or, as a string, why `schema` cannot be validated in bounded time: it expands to more
 * than `limit` sub-schemas, or a `$ref` leads back in place to a schema it is part of. The message
 * names the place in the manifest (`inputSchema.…`) and, for the size, the argument it checks.
 *
 * What the limit counts: at every place an argument value can sit, each sub-schema that checks the
 * value (the ones handed to it, and all they lead to in place) and each one they hand down to its
 * properties and items. A `$defs` entry counts each time it is reached.
 */
export function measureSchema(schema: Record<string, unknown>, limit: number = MAX_SCHEMA_EXPANSION): number | string {
  const ids = new Map<unknown, number>();
  const idOf = (v: unknown): number => {
    if (!ids.has(v)) ids.set(v, ids.size);
    return ids.get(v) as number;
  };
  const keyOf = (seeds: Sub[]): string =>
    seeds
      .map((s) => idOf(s.schema))
      .sort((a, b) => a - b)
      .join(',');
  const root: State = { seeds: [{ schema, path: 'inputSchema' }], depth: 0, where: '' };
  const queued = new Set<string>([keyOf(root.seeds)]);
  const queue: State[] = [root];
  let total = 1;
  let widest = 1;
  // Breadth first: a place is counted the first time its sub-schemas occur, which is at the
  // shallowest depth, with the most nesting left below it. A seed was counted when handed down.
  for (let next = 0; next < queue.length; next++) {
    const state = queue[next] as State;
    const applied: Sub[] = [];
    let here = 0;
    for (const seed of state.seeds) {
      // Depth first without recursion (a manifest may nest deeper than the stack); `open` holds
      // the schemas being expanded on the current in-place path.
      const open = new Set<unknown>();
      const stack: Array<{ sub: Sub; leave: boolean }> = [{ sub: seed, leave: false }];
      while (stack.length > 0) {
        const { sub, leave } = stack.pop() as { sub: Sub; leave: boolean };
        if (leave) {
          open.delete(sub.schema);
          continue;
        }
        if (open.has(sub.schema)) {
          const from = sub.via
            ? `${sub.via.path}: "$ref": ${JSON.stringify(sub.via.ref)} leads back to ${sub.path}`
            : `${sub.path}: leads back to itself`;
          return `${from}, which it is part of, without descending into a property or an item: validating an argument against it would never end`;
        }
        total += ownCost(sub) - (sub === seed ? 1 : 0);
        here += ownCost(sub);
        if (total > limit) return tooLarge((state.seeds[0] as Sub).path, state.where, limit);
        applied.push(sub);
        if (!isSchema(sub.schema)) continue;
        open.add(sub.schema);
        stack.push({ sub, leave: true });
        for (const inner of inPlace(sub, schema).reverse()) stack.push({ sub: inner, leave: false });
      }
    }
    widest = Math.max(widest, here);
    if (state.depth >= MAX_ARGS_DEPTH) continue;
    for (const child of children(
      applied.filter((a): a is Applied => isSchema(a.schema)),
      state,
    )) {
      if (child.seeds.length === 0) continue;
      total += child.seeds.length;
      if (total > limit) return tooLarge((child.seeds[0] as Sub).path, child.where, limit);
      const key = keyOf(child.seeds);
      if (queued.has(key)) continue;
      queued.add(key);
      queue.push(child);
    }
  }
  return widest;
}
