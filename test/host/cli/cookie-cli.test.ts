/**
 * @module test/host/cli/cookie-cli.test
 * The CLI for cookie connections as operators and plugin authors run it (the real bin, a
 * temporary data dir). `workbench connections import --cookies FILE|JSON`: a session's cookies
 * given inline or in a file (a JSON array, or a playwright storage state) become the user's cookie
 * connection, saying what was kept and what was left out; every bad input is a usage error (exit
 * 2) that says what to fix, and stores nothing. `workbench plugin validate` names the field of a
 * bad cookie auth (every shape: test/contracts/cookie-manifest.unit.test.ts) and passes the demo.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BUILTIN_PLUGINS_DIR } from '../../../host/paths.js';
import { openSqlite } from '../../../host/storage/sqlite.js';
import { runCli } from '../../helpers/cli.js';

const EMAIL = 'operator-import@example.com';
const in1h = Math.floor(Date.now() / 1000) + 3600;
const session = {
  name: 'session',
  value: 'imported-session-0123456789',
  domain: 'httpbin.org',
  path: '/',
  expires: in1h,
};
const foreign = { name: 'ad', value: 'tracker', domain: '.ads.example' };

describe('plugin validate', () => {
  it('refuses a bad cookie auth naming the field, and passes the demo plugin', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wb-cookie-validate-'));
    try {
      const plugin = path.join(dir, 'cookied');
      fs.mkdirSync(plugin);
      fs.writeFileSync(
        path.join(plugin, 'manifest.json'),
        JSON.stringify({
          name: 'cookied',
          version: '1.0.0',
          displayName: 'Cookied',
          description: 'A cookie connection under test.',
          auth: { type: 'cookie', loginUrl: 'https://login.elsewhere.net/', domains: ['example.com'] },
          egress: ['api.example.com'],
          tools: [{ name: 'cookied_get', description: 'Gets.', inputSchema: { type: 'object' } }],
        }),
      );
      fs.writeFileSync(path.join(plugin, 'plugin.js'), 'export default { cookied_get: async () => 1 };');
      const bad = runCli({ WORKBENCH_DATA_DIR: dir }, 'plugin', 'validate', plugin);
      assert.equal(bad.code, 1);
      assert.match(
        bad.stderr,
        /^invalid: .*manifest\.json: auth\.loginUrl: its host "login\.elsewhere\.net" is not within domains \(example\.com\)/,
      );
      const demo = runCli(
        { WORKBENCH_DATA_DIR: dir },
        'plugin',
        'validate',
        path.join(BUILTIN_PLUGINS_DIR, 'httpbin-cookie'),
      );
      assert.equal(demo.code, 0, demo.stderr);
      assert.match(demo.stdout, /^ok: httpbin-cookie@1\.0\.0: 3 tool\(s\)/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('connections import --cookies', () => {
  let dir: string;
  const run = (...argv: string[]) => runCli({ WORKBENCH_DATA_DIR: dir }, ...argv);
  const importing = (...argv: string[]) =>
    run('connections', 'import', '--email', EMAIL, '--integration', 'httpbin-cookie', ...argv);
  const stored = async (): Promise<number> => {
    const db = openSqlite(path.join(dir, 'workbench.db'));
    try {
      return (await db.all("SELECT id FROM connections WHERE integration = 'httpbin-cookie'")).length;
    } finally {
      await db.close();
    }
  };

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wb-cookie-cli-'));
    assert.equal(run('users', 'create', '--email', EMAIL).code, 0);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('refuses what is not a list of cookies, before anything is read or stored', () => {
    const cases: Array<[string[], RegExp]> = [
      [['--cookies', '[{"name": '], /--cookies is not JSON: /],
      [
        ['--cookies', path.join(dir, 'missing.json')],
        /--cookies: cannot read the file .*missing\.json \(ENOENT\); give a file holding a JSON array of cookies, or the JSON itself/,
      ],
      [['--cookies', '{"name": "session"}'], /--cookies must be a JSON array of cookies/],
      [
        ['--cookies', '[]', '--token', 'x'],
        /--cookies is the whole credential of a cookie integration: give it without --token/,
      ],
      [['--cookies', '[]', '--expires-in', '60'], /give it without --expires-in/],
    ];
    for (const [argv, expected] of cases) {
      const r = importing(...argv);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, expected);
    }
  });

  it('refuses cookies for another kind of integration, and another credential for a cookie one', () => {
    const other = run('connections', 'import', '--email', EMAIL, '--integration', 'newrelic', '--cookies', '[]');
    assert.equal(other.code, 2);
    assert.match(other.stderr, /newrelic is not a cookie integration \(auth type "apikey"\): --cookies does not apply/);
    const token = importing('--token', 'abc');
    assert.equal(token.code, 2);
    assert.match(
      token.stderr,
      /httpbin-cookie is a cookie integration: give its signed-in session's cookies with --cookies FILE\|JSON/,
    );
  });

  it('names each cookie that is not one, and refuses a session without a cookie of the domains; nothing is stored', async () => {
    const bad = importing(
      '--cookies',
      JSON.stringify([session, { value: 'x', domain: 'httpbin.org' }, { ...session, expires: 'soon' }]),
    );
    assert.equal(bad.code, 2);
    assert.match(
      bad.stderr,
      /--cookies: cookies\[1\]\.name: required: the cookie name; cookies\[2\]\.expires: must be a number/,
    );
    const none = importing('--cookies', JSON.stringify([foreign, { ...session, expires: 1 }]));
    assert.equal(none.code, 2);
    assert.match(none.stderr, /--cookies: httpbin \(cookie demo\): no unexpired cookie of httpbin\.org was captured/);
    assert.equal(await stored(), 0);
  });

  it('stores the cookies of httpbin.org from a storage-state file and says what it kept and left out; a re-import replaces them', async () => {
    const file = path.join(dir, 'state.json');
    fs.writeFileSync(file, JSON.stringify({ cookies: [session, foreign], origins: [] }));
    const r = importing('--cookies', file);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      new RegExp(
        `^Connected httpbin-cookie for ${EMAIL} \\(connection [0-9a-f-]+\\): 1 cookie\\(s\\) kept, until ${new Date(in1h * 1000).toISOString().replace(/[.]/g, '\\.')}; 1 left out: ad \\(\\.ads\\.example\\): not within httpbin\\.org\\.\\n$`,
      ),
    );
    assert.ok(!r.stdout.includes(session.value));
    const again = importing('--cookies', JSON.stringify([{ ...session, expires: -1 }]), '--json');
    assert.equal(again.code, 0, again.stderr);
    const out = JSON.parse(again.stdout) as Record<string, unknown>;
    assert.deepEqual(
      { replaced: out['replaced'], cookies: out['cookies'], dropped: out['dropped'], expiresAt: out['expiresAt'] },
      { replaced: true, cookies: 1, dropped: [], expiresAt: null },
    );
    assert.equal(await stored(), 1);
    const bytes = fs
      .readdirSync(dir)
      .filter((f) => f.startsWith('workbench.db'))
      .map((f) => fs.readFileSync(path.join(dir, f)).toString('latin1'))
      .join('');
    assert.ok(!bytes.includes(session.value), 'sealed in the database');
  });
});
