/**
 * @module test/host/cli/instance-cli.test
 * `workbench connections import --instance-url` as an operator runs it (the real bin, a temporary
 * data dir, the default policy): an instance is checked against the server's address rules and
 * refused with its catalogue code (the metadata and loopback addresses, http, a name that does not
 * resolve; the whole list is test/host/connections/instance-url.unit.test.ts), storing nothing; a public one is stored with the connection; a re-import without
 * the flag keeps it, and the default's own URL goes back to the default. The flag is refused for
 * an integration that takes no instance.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openSqlite } from '../../../host/storage/sqlite.js';
import { runCli } from '../../helpers/cli.js';

const EMAIL = 'instance-import@example.com';

describe('connections import --instance-url', () => {
  let dir: string;
  const run = (...argv: string[]) => runCli({ WORKBENCH_DATA_DIR: dir }, ...argv);
  const importing = (integration: string, ...argv: string[]) =>
    run('connections', 'import', '--email', EMAIL, '--integration', integration, ...argv);
  const instanceOf = async (integration: string): Promise<string | null | undefined> => {
    const db = openSqlite(path.join(dir, 'workbench.db'));
    try {
      return (
        await db.get<{ instance_url: string | null }>(
          'SELECT c.instance_url FROM connections c JOIN users u ON u.id = c.user_id WHERE u.email = ? AND c.integration = ?',
          [EMAIL, integration],
        )
      )?.instance_url;
    } finally {
      await db.close();
    }
  };

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wb-instance-cli-'));
    assert.equal(run('users', 'create', '--email', EMAIL).code, 0);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('refuses an instance the address rules refuse, naming the code, and stores nothing', async () => {
    for (const [url, code, says] of [
      ['https://169.254.169.254', 'GW_ERR_CONNECTION_INSTANCE_BLOCKED', /169\.254\.169\.254 is a linkLocal address/],
      ['https://localhost', 'GW_ERR_CONNECTION_INSTANCE_BLOCKED', /"localhost" resolves to a loopback address/],
      ['http://93.184.216.34', 'GW_ERR_CONNECTION_INSTANCE_INVALID', /must be an https address, not http/],
      ['https://gitlab.nowhere.invalid', 'GW_ERR_CONNECTION_INSTANCE_UNRESOLVABLE', /does not resolve/],
    ] as const) {
      const r = importing('gitlab', '--token', 'glpat-cli-0001', '--instance-url', url);
      assert.equal(r.code, 2, url);
      assert.match(r.stderr, new RegExp(`^workbench: ${code}: GitLab instance URL: `), url);
      assert.match(r.stderr, says, url);
    }
    assert.equal(await instanceOf('gitlab'), undefined);
    const none = importing('github', '--token', 'ghp-cli-0001', '--instance-url', 'https://93.184.216.34');
    assert.equal(none.code, 2);
    assert.match(none.stderr, /GW_ERR_CONNECTION_INSTANCE_INVALID: GitHub takes no instance URL/);
  });

  it('stores a public instance, keeps it on a re-import that does not name one, and goes back to the default on its URL', async () => {
    const first = importing('gitlab', '--token', 'glpat-cli-0002', '--instance-url', 'https://93.184.216.34:8443/');
    assert.equal(first.code, 0, first.stderr);
    assert.equal(await instanceOf('gitlab'), 'https://93.184.216.34:8443');
    assert.equal(importing('gitlab', '--token', 'glpat-cli-0003').code, 0);
    assert.equal(await instanceOf('gitlab'), 'https://93.184.216.34:8443', 'kept');
    assert.equal(importing('gitlab', '--token', 'glpat-cli-0004', '--instance-url', 'https://gitlab.com').code, 0);
    assert.equal(await instanceOf('gitlab'), null, 'the default');
  });
});
