/**
 * @module test/invariants/imports.unit
 * The dependency direction of DESIGN.md, checked on the source: the host never imports plugin code
 * (invariant 1); the sandbox never imports the host; the host never imports tests (the security
 * report ships in host/ and runs without test/); the isolate side of the worker loads no fastify and
 * no file system module; nothing outside bench/ imports a plugin module.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { PACKAGE_ROOT } from '../../host/paths.js';

function files(dir: string): string[] {
  return fs.readdirSync(path.join(PACKAGE_ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    return e.isDirectory() ? files(rel) : /\.(ts|mts|js|mjs)$/.test(e.name) ? [rel] : [];
  });
}

const IMPORT =
  /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(PACKAGE_ROOT, file), 'utf8');
  return [...text.matchAll(IMPORT)].map((m) => (m[1] ?? m[2] ?? m[3]) as string);
}

function resolvesInto(file: string, spec: string, dir: string): boolean {
  if (!spec.startsWith('.')) return false;
  const target = path.normalize(path.join(path.dirname(file), spec));
  return target === dir || target.startsWith(dir + path.sep);
}

it('host/ never imports from plugins/', () => {
  const bad = files('host').flatMap((f) =>
    importsOf(f)
      .filter((s) => resolvesInto(f, s, 'plugins'))
      .map((s) => `${f}: ${s}`),
  );
  assert.deepEqual(bad, []);
});

it('host/ never imports from test/ (what the security report needs ships with the gateway)', () => {
  const bad = files('host').flatMap((f) =>
    importsOf(f)
      .filter((s) => resolvesInto(f, s, 'test'))
      .map((s) => `${f}: ${s}`),
  );
  assert.deepEqual(bad, []);
});

it('sandbox/ never imports from host/ or plugins/', () => {
  const bad = files('sandbox').flatMap((f) =>
    importsOf(f)
      .filter((s) => resolvesInto(f, s, 'host') || resolvesInto(f, s, 'plugins'))
      .map((s) => `${f}: ${s}`),
  );
  assert.deepEqual(bad, []);
});

it('the sandbox worker loads neither fastify nor the file system', () => {
  const worker = files('sandbox/worker');
  assert.ok(worker.length > 0);
  const bad = worker.flatMap((f) =>
    importsOf(f)
      .filter((s) => /^(node:)?fs(\/promises)?$|^fastify/.test(s))
      .map((s) => `${f}: ${s}`),
  );
  assert.deepEqual(bad, []);
});

it('fastify stays in host/app.ts, host/transport/ and host/portal/', () => {
  const bad = files('host')
    .filter(
      (f) =>
        !f.startsWith(path.join('host', 'transport')) &&
        !f.startsWith(path.join('host', 'portal')) &&
        f !== path.join('host', 'app.ts'),
    )
    .flatMap((f) =>
      importsOf(f)
        .filter((s) => s.startsWith('fastify') || s.startsWith('@fastify/'))
        .map((s) => `${f}: ${s}`),
    );
  assert.deepEqual(bad, []);
});
