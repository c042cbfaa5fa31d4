/**
 * @module test/host/error-catalogue.unit
 * docs/errors.md and the code's catalogues list the same codes, in both directions, and every
 * GW_ERR_* code used in host/ or sandbox/ is catalogued.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { GATEWAY_ERRORS } from '../../host/errors.js';
import { CONNECTION_ERROR_CODES } from '../../host/connections/errors.js';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { BRIDGE_ERROR_CODES, SANDBOX_ERROR_CODES } from '../../contracts/protocol.js';

const catalogued = new Set<string>([...Object.keys(GATEWAY_ERRORS), ...SANDBOX_ERROR_CODES, ...BRIDGE_ERROR_CODES, ...CONNECTION_ERROR_CODES]);

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

it('docs/errors.md lists exactly the catalogued codes', () => {
  const doc = fs.readFileSync(path.join(PACKAGE_ROOT, 'docs', 'errors.md'), 'utf8');
  const documented = new Set([...doc.matchAll(/`(GW_ERR_[A-Z0-9_]+)`/g)].map((m) => m[1] as string));
  assert.deepEqual([...catalogued].filter((c) => !documented.has(c)), [], 'catalogued but not documented');
  assert.deepEqual([...documented].filter((c) => !catalogued.has(c)), [], 'documented but not catalogued');
});

it('every code used in host/ and sandbox/ is catalogued', () => {
  const used = new Set<string>();
  for (const root of ['host', 'sandbox'])
    for (const f of sourceFiles(path.join(PACKAGE_ROOT, root)))
      for (const m of fs.readFileSync(f, 'utf8').matchAll(/GW_ERR_[A-Z0-9]+(?:_[A-Z0-9]+)+/g)) used.add(m[0]);
  assert.deepEqual([...used].filter((c) => !catalogued.has(c)), []);
});

it('no code is listed twice', () => {
  const all = [...Object.keys(GATEWAY_ERRORS), ...SANDBOX_ERROR_CODES, ...BRIDGE_ERROR_CODES, ...CONNECTION_ERROR_CODES];
  assert.equal(new Set(all).size, all.length);
});
