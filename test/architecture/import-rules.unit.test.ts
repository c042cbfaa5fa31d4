/**
 * The folders say which process and which side of the trust boundary code runs in
 * (docs/architecture.md), and these rules keep it so: the sandbox process's code never imports the
 * host's (it must not be able to reach credentials, the database or the bridge), the contracts
 * and the common code both processes run import neither, the rest of the host enters the sandbox supervisor and the bridge
 * only by their public entries, plugin code sees only the SDK, the worker threads load no fastify
 * and no file system, fastify stays in the HTTP layer, and no module imports itself back through
 * others. (Invariant 1 of the design, the host never imports plugin code, is the first rule: plugins/
 * is no area the host may import.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AREAS, listSources, readSource, type SourceFile } from './source-graph.js';

const areaOf = (file: string): string => file.split('/')[0] ?? '';
const within = (file: string, folder: string): boolean => file.startsWith(`${folder}/`);

/** May files of the first area import files of the second? */
const ALLOWED: Record<string, readonly string[]> = {
  host: ['host', 'contracts', 'common'],
  sandbox: ['sandbox', 'contracts', 'common'],
  common: ['common', 'contracts'],
  contracts: ['contracts', 'common'],
  sdk: ['sdk', 'contracts'],
};

/**
 * The few imports that cross a line on purpose, each with its reason. A new one needs a reason
 * written here, read by whoever reviews it.
 */
const EXCEPTIONS: Record<string, string> = {
  'host/plugin-sdk/evaluate-definition.ts -> sandbox/isolate/web-globals-source.ts':
    'the plugin build evaluates a definition in an isolate of its own, with the web globals plugin code runs with',
  'host/plugin-sdk/to-manifest.ts -> sdk/define.ts':
    'the plugin build reads the marks defineTool and definePlugin put on what they return',
};

/** Host folders the rest of the host enters only through their index.ts. */
const ENTRIES = ['host/supervisor', 'host/bridge'];

const sources: SourceFile[] = listSources(AREAS).map(readSource);
const plugins: SourceFile[] = listSources(['plugins']).map(readSource);
const edges = sources.flatMap((s) =>
  s.imports
    .filter((i) => i.target !== undefined)
    .map((i) => ({ from: s.file, to: i.target as string, line: i.line, typeOnly: i.typeOnly })),
);

describe('import rules', () => {
  it('reads the whole tree (a test that reads nothing cannot fail)', () => {
    for (const area of AREAS)
      assert.ok(
        sources.some((s) => areaOf(s.file) === area),
        `no sources under ${area}/`,
      );
    assert.ok(edges.length > 500, `only ${edges.length} imports read`);
    assert.ok(plugins.length >= 15, `only ${plugins.length} plugin sources read`);
  });

  it('each area imports only the areas below it: the sandbox process never the host, the contracts neither', () => {
    const broken = edges
      .filter((e) => !(ALLOWED[areaOf(e.from)] ?? []).includes(areaOf(e.to)))
      .map((e) => `${e.from} -> ${e.to}`)
      .filter((e) => EXCEPTIONS[e] === undefined);
    assert.deepEqual(broken, []);
  });

  it('every exception written down is still needed', () => {
    const crossing = new Set(edges.map((e) => `${e.from} -> ${e.to}`));
    assert.deepEqual(
      Object.keys(EXCEPTIONS).filter((e) => !crossing.has(e)),
      [],
    );
  });

  it('the rest of the host enters the sandbox supervisor and the bridge only by their public entries', () => {
    const broken = edges.filter((e) =>
      ENTRIES.some(
        (d) => within(e.to, d) && !within(e.from, d) && e.to !== `${d}/index.ts` && areaOf(e.from) === 'host',
      ),
    );
    assert.deepEqual(
      broken.map((e) => `${e.from}:${e.line} -> ${e.to}`),
      [],
    );
  });

  it('production code never imports tests or benchmarks', () => {
    const broken = edges.filter((e) => within(e.to, 'test') || within(e.to, 'bench'));
    assert.deepEqual(
      broken.map((e) => `${e.from}:${e.line} -> ${e.to}`),
      [],
    );
  });

  it('the sandbox worker and the isolate load neither fastify nor the file system', () => {
    const worker = sources.filter((s) => within(s.file, 'sandbox/worker') || within(s.file, 'sandbox/isolate'));
    assert.ok(worker.length > 0);
    const broken = worker.flatMap((s) =>
      s.imports
        .filter((i) => /^(node:)?fs(\/promises)?$|^fastify/.test(i.specifier))
        .map((i) => `${s.file}:${i.line} ${i.specifier}`),
    );
    assert.deepEqual(broken, []);
  });

  it('fastify stays in host/app.ts, host/transport/ and host/portal/', () => {
    const allowed = (file: string): boolean =>
      file === 'host/app.ts' || within(file, 'host/transport') || within(file, 'host/portal');
    const broken = sources
      .filter((s) => !allowed(s.file))
      .flatMap((s) =>
        s.imports
          .filter((i) => i.specifier.startsWith('fastify') || i.specifier.startsWith('@fastify/'))
          .map((i) => `${s.file}:${i.line} ${i.specifier}`),
      );
    assert.deepEqual(broken, []);
  });

  it('plugin code imports only the SDK and its own files', () => {
    const broken = plugins.flatMap((p) =>
      p.imports
        .filter((i) =>
          i.target === undefined
            ? i.specifier !== 'workbench/plugin-sdk'
            : !within(i.target, `plugins/${p.file.split('/')[1]}`),
        )
        .map((i) => `${p.file}:${i.line} -> ${i.specifier}`),
    );
    assert.deepEqual(broken, []);
  });

  it('no import cycles, type-only imports included', () => {
    assert.deepEqual(cycles(edges), []);
  });
});

/** Strongly connected components of more than one file (Tarjan), each as its files in order. */
function cycles(list: readonly { from: string; to: string }[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of list) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return found;
}
