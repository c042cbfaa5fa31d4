/**
 * @module test/security/hostile-host-access.test
 * A hostile plugin looks for the host's files, environment and database: Node, Deno and Bun
 * globals, require, dynamic and static import, Function-constructor escapes. Nothing is reachable,
 * each attempt ends in a clear result or error code, and no file, environment value or database
 * content appears in any response or log.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { findSecrets, startSecurityGateway, type SecurityGateway } from '../helpers/security-gateway.js';

const ENV_CANARY = `SECRET-ENV-${randomBytes(6).toString('hex')}`;

describe('a hostile plugin reading files, environment and the database', () => {
  let gw: SecurityGateway;
  let apiKey: string;
  let dbFile: string;
  const secrets: string[] = [ENV_CANARY];

  before(async () => {
    process.env['WORKBENCH_TEST_CANARY'] = ENV_CANARY;
    gw = await startSecurityGateway();
    const u = await gw.createUser('eve@example.com');
    apiKey = u.apiKey;
    dbFile = path.join(gw.dataDir, 'workbench.db');
    secrets.push(apiKey, fs.readFileSync(path.join(gw.dataDir, 'encryption.key'), 'utf8').trim());
  });

  after(async () => {
    delete process.env['WORKBENCH_TEST_CANARY'];
    await gw?.close();
  });

  it('sees no Node, Deno or Bun capability on its global, directly or through Function', async () => {
    for (const items of [
      await gw.batch('hostile-reader', [{ tool: 'reader_globals' }], apiKey),
      await gw.mcpExecute([{ tool: 'reader_globals' }], apiKey),
    ]) {
      const r = items[0].result;
      assert.deepEqual(r.present, [], `reachable: ${JSON.stringify(r.present)}`);
      assert.deepEqual(r.viaFunction, []);
      for (const name of ['process', 'require', 'Buffer', 'Deno', 'Bun', 'fetch', '__wb_bridge'])
        assert.ok(!r.own.includes(name), `${name} is not an own global`);
    }
  });

  it('cannot import a Node built-in or a file dynamically', async () => {
    const specifiers = [
      'node:fs',
      'fs',
      'node:child_process',
      `file://${dbFile}`,
      'file:///etc/passwd',
      'data:text/javascript,export default 1',
      'https://evil.example/x.js',
    ];
    const items = await gw.batch(
      'hostile-reader',
      specifiers.map((specifier) => ({ tool: 'reader_import', args: { specifier } })),
      apiKey,
    );
    items.forEach((item, i) => {
      assert.equal(item.result, undefined, `${specifiers[i]} was imported: ${JSON.stringify(item).slice(0, 300)}`);
      assert.equal(item.code, 'GW_ERR_SANDBOX_HANDLER_THREW', `${specifiers[i]}: ${JSON.stringify(item)}`);
      assert.equal(typeof item.error, 'string');
    });
  });

  it('refuses to load a module with a static import, with a clear code', async () => {
    const loaded = gw.gateway.registry.plugin('hostile-static-import');
    if (!loaded) {
      assert.ok(
        gw.gateway.pluginErrors.some((e) => e.dir.endsWith('hostile-static-import')),
        'refused at load time instead',
      );
      return;
    }
    const [item] = await gw.batch('hostile-static-import', [{ tool: 'import_read', args: { file: dbFile } }], apiKey);
    assert.equal(item.code, 'GW_ERR_SANDBOX_LOAD_FAILED', JSON.stringify(item));
    assert.match(item.error, /import/);
  });

  it('finds no process through Function-constructor escapes', async () => {
    const [item] = await gw.batch(
      'hostile-reader',
      [{ tool: 'reader_function_escape', args: { file: dbFile } }],
      apiKey,
    );
    const found = item.result?.found as unknown[];
    assert.equal(found.length, 6, JSON.stringify(item));
    for (const f of found)
      assert.ok(typeof f === 'string', `an escape returned data: ${JSON.stringify(f).slice(0, 200)}`);
  });

  it('leaves no environment value, key, file or database content in responses, audit or logs', async () => {
    const passwdLine = fs.existsSync('/etc/passwd')
      ? (fs.readFileSync('/etc/passwd', 'utf8').split('\n')[0] ?? 'root:x:0:0')
      : 'root:x:0:0';
    const texts = [...gw.bodies, await gw.auditText(), ...gw.logs];
    assert.deepEqual(findSecrets(texts, secrets), []);
    for (const t of gw.bodies) {
      assert.ok(!t.includes(passwdLine), 'no /etc/passwd content');
      assert.ok(!t.includes('SQLite format 3'), 'no database content');
    }
    const [echo] = await gw.batch('fixture-echo', [{ tool: 'echo_args', args: { text: 'unharmed' } }], apiKey);
    assert.equal(echo.result?.text, 'unharmed');
  });
});
