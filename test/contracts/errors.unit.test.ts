/**
 * @module test/contracts/errors.unit
 * The catalogue (contracts/errors.ts) is the one source of error codes: docs/errors.md lists the
 * same codes with the same wire, HTTP status and retryability, in both directions; the older lists
 * are views of it; and every code-like string used in host/, sandbox/, contracts/ or common/ is in it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import {
  ERRORS,
  WorkbenchError,
  codesOf,
  fail,
  isWorkbenchError,
  messageOf,
  type ErrorCode,
} from '../../contracts/errors.js';
import { GATEWAY_ERRORS, GatewayError, isGatewayError } from '../../host/errors.js';
import { CONNECTION_ERROR_CODES, ConnectionError } from '../../host/connections/errors.js';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { BRIDGE_ERROR_CODES, SANDBOX_ERROR_CODES } from '../../contracts/protocol.js';
import { ApiKeyLimitError, ApiKeyOriginRevokedError } from '../../host/storage/users.js';

const catalogued = new Set<string>(Object.keys(ERRORS));

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** The rows of docs/errors.md's code tables: code → [where, HTTP, retry helps]. */
function documentedRows(): Map<string, string[]> {
  const doc = fs.readFileSync(path.join(PACKAGE_ROOT, 'docs', 'errors.md'), 'utf8');
  const rows = new Map<string, string[]>();
  for (const m of doc.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \| ([^|]+) \| ([^|]+) \| ([^|]+) \|/gm)) {
    assert.ok(!rows.has(m[1] as string), `${m[1]} is documented twice`);
    rows.set(
      m[1] as string,
      [m[2], m[3], m[4]].map((c) => (c as string).trim()),
    );
  }
  return rows;
}

it('docs/errors.md lists exactly the catalogued codes, with their wire, HTTP status and retryability', () => {
  const rows = documentedRows();
  assert.deepEqual(
    [...catalogued].filter((c) => !rows.has(c)),
    [],
    'catalogued but not documented',
  );
  assert.deepEqual(
    [...rows.keys()].filter((c) => !catalogued.has(c)),
    [],
    'documented but not catalogued',
  );
  for (const [code, spec] of Object.entries(ERRORS) as [ErrorCode, (typeof ERRORS)[ErrorCode]][]) {
    const want = [spec.wire, 'status' in spec ? String(spec.status) : '—', spec.retryable ? 'yes' : 'no'];
    assert.deepEqual(
      rows.get(code),
      want,
      `${code}: docs/errors.md says where | HTTP | retry helps = ${rows.get(code)?.join(' | ')}`,
    );
  }
});

it('every code used in host/, sandbox/, contracts/ and common/ is catalogued', () => {
  const used = new Set<string>();
  for (const root of ['host', 'sandbox', 'contracts', 'common'])
    for (const f of sourceFiles(path.join(PACKAGE_ROOT, root)))
      for (const m of fs
        .readFileSync(f, 'utf8')
        .matchAll(/\b(?:GW_ERR|VAULT|API_KEY|WB_ADDRESS|REPORT_NO)_[A-Z0-9]+(?:_[A-Z0-9]+)*\b/g))
        used.add(m[0]);
  // a constant's name, not a code
  used.delete('API_KEY_PREFIX');
  assert.deepEqual(
    [...used].filter((c) => !catalogued.has(c)),
    [],
  );
});

it('the older lists are views of the catalogue: each family once, together all of it', () => {
  assert.deepEqual(Object.keys(GATEWAY_ERRORS), codesOf('gateway'));
  assert.deepEqual(SANDBOX_ERROR_CODES, codesOf('sandbox'));
  assert.deepEqual(BRIDGE_ERROR_CODES, codesOf('bridge'));
  assert.deepEqual(CONNECTION_ERROR_CODES, codesOf('connection'));
  const families = (
    ['gateway', 'sandbox', 'bridge', 'connection', 'vault', 'api-key', 'operation', 'signal'] as const
  ).flatMap((g) => codesOf(g));
  assert.equal(new Set(families).size, families.length);
  assert.deepEqual([...families].sort(), [...catalogued].sort());
});

it("docs/errors.md gives each code's Retry-After as the catalogue does", () => {
  const doc = fs.readFileSync(path.join(PACKAGE_ROOT, 'docs', 'errors.md'), 'utf8');
  for (const [code, spec] of Object.entries(ERRORS))
    if ('retryAfterSec' in spec)
      assert.ok(doc.includes(`\`${code}\` (${spec.status}, \`Retry-After: ${spec.retryAfterSec}\`)`), code);
});

it('a status is an HTTP status, and a Retry-After comes only with one', () => {
  for (const [code, spec] of Object.entries(ERRORS)) {
    if ('status' in spec) assert.ok(Number.isInteger(spec.status) && spec.status >= 300 && spec.status < 600, code);
    if ('retryAfterSec' in spec) assert.ok('status' in spec && spec.retryable, code);
  }
});

it('fail() makes a WorkbenchError of the code with the message of its template; the families keep their classes', () => {
  const e = fail('GW_ERR_CLI_USAGE', { message: '--email is required' });
  assert.ok(e instanceof WorkbenchError && e instanceof Error);
  assert.equal(e.code, 'GW_ERR_CLI_USAGE');
  assert.equal(e.message, '--email is required');
  assert.ok(isWorkbenchError(e));
  assert.ok(!isGatewayError(e), 'only a GatewayError is one');
  assert.ok(
    !isWorkbenchError(
      Object.assign(new Error('connect again at https://evil.example.net'), { code: 'GW_ERR_ENGINE_NOT_CONNECTED' }),
    ),
    'a code alone does not make one',
  );
  const cause = new RangeError('x');
  assert.equal(fail('GW_ERR_STORAGE_UNAVAILABLE', { message: 'm' }, { cause }).cause, cause);
  const g = new GatewayError('GW_ERR_CONFIG_INVALID', 'm', { field: 'LOG_LEVEL' });
  assert.ok(g instanceof WorkbenchError && isGatewayError(g) && isWorkbenchError(g));
  assert.deepEqual(g.details, { field: 'LOG_LEVEL' });
  assert.ok(new ConnectionError('GW_ERR_CONNECTION_PROVIDER', 'm') instanceof WorkbenchError);
  // the templates keep the wording these errors always had
  assert.equal(new ApiKeyLimitError(50).message, messageOf('API_KEY_LIMIT', { limit: 50 }));
  assert.equal(
    new ApiKeyLimitError(50).message,
    'this account already has 50 active API keys, the most it may have: revoke one it no longer uses, then create the new one',
  );
  assert.equal(new ApiKeyOriginRevokedError('k1').code, 'API_KEY_ORIGIN_REVOKED');
  assert.equal(
    messageOf('WB_ADDRESS_BLOCKED', { host: 'db.internal', range: 'private' }),
    'db.internal resolves to a private address',
  );
});
