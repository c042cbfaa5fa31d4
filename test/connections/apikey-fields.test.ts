/**
 * @module test/connections/apikey-fields.test
 * API-key form fields are checked against the manifest's `pattern` with RE2, linear in the value:
 * a pattern that makes a backtracking RegExp explode cannot stall the event loop every tenant shares.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validateApiKeyFields } from '../../host/connections/apikey-fields.js';
import type { ApiKeyField } from '../../sandbox/manifest.js';

const field = (pattern: string): ApiKeyField => ({ name: 'site', label: 'Site', pattern }) as ApiKeyField;

describe('API-key field patterns', () => {
  it('a whole-value match, as before', () => {
    assert.deepEqual(validateApiKeyFields([field('[a-z]+-[0-9]+')], { site: 'abc-12' }).errors, {});
    assert.match(validateApiKeyFields([field('[a-z]+-[0-9]+')], { site: 'abc-12x' }).errors['site'] ?? '', /expected format/);
    assert.match(validateApiKeyFields([field('[a-z]+')], { site: 'x abc' }).errors['site'] ?? '', /expected format/, 'anchored at both ends');
  });

  it('a pattern that backtracks exponentially in JavaScript answers at once', () => {
    // with RegExp, 27 characters took 3 s and each more doubles it; 34 would take minutes
    const t0 = performance.now();
    const r = validateApiKeyFields([field('([a-z0-9]+-?)*')], { site: `${'a'.repeat(33)}!` });
    assert.match(r.errors['site'] ?? '', /expected format/);
    assert.ok(performance.now() - t0 < 1000, `took ${performance.now() - t0} ms`);
  });

  it('a pattern RE2 cannot compile (backreference) is never satisfied', () => {
    assert.match(validateApiKeyFields([field('(a)\\1')], { site: 'aa' }).errors['site'] ?? '', /expected format/);
  });
});
