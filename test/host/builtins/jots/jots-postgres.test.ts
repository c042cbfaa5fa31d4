/**
 * @module test/host/builtins/jots/jots-postgres.test
 * Jots on PostgreSQL, as replicas serve them: two gateways on one database, a site deployed on one
 * is served by the other (to its owner's key, by its share link, through a view link opened in the
 * other's portal), an update on one is what the other serves, a revoked share link ends on both,
 * and deploys sent to both at once never pass the user's quota of sites or bytes together (the
 * user's row lock serialises them across replicas).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateKey } from '../../../../host/connections/vault.js';
import { startGateway, type TestGateway } from '../../../helpers/gateway.js';
import { postgresSkipReason, startPostgres, type TestPostgres } from '../../../helpers/postgres.js';
import { signInWithKey } from '../../../helpers/web-client.js';

const QUOTAS = { maxSitesPerUser: 5, maxBytesPerUser: 10_000 };

async function text(url: string, headers: Record<string, string> = {}): Promise<[number, string]> {
  const res = await fetch(url, { headers, redirect: 'manual' });
  return [res.status, await res.text()];
}

describe('jots on PostgreSQL, served by replicas', { skip: postgresSkipReason() ?? false }, () => {
  let pg: TestPostgres;
  let a: TestGateway;
  let b: TestGateway;

  before(async () => {
    pg = await startPostgres();
    const options = {
      databaseUrl: pg.url,
      plugins: [],
      env: { WORKBENCH_ENCRYPTION_KEY: generateKey().toString('hex') },
      policy: { builtins: { browser: { enabled: false }, jots: { enabled: true, ...QUOTAS } } },
      workers: 1,
    };
    [a, b] = await Promise.all([startGateway(options), startGateway(options)]);
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await pg?.stop();
  });

  it('serves on one replica what was deployed and updated on the other', async () => {
    const made = await a.execute('jots_deploy', {
      files: [
        { path: 'index.html', content: '<h1>one</h1>' },
        { path: 'i.png', content: Buffer.from([0, 1, 2, 255]).toString('base64'), encoding: 'base64' },
      ],
      share: true,
    });
    const { id, shareUrl } = made.result as { id: string; shareUrl: string };
    const onB = (u: string): string => u.replace(a.url, b.url);
    const key = { 'x-workbench-api-key': b.apiKey };
    assert.deepEqual(await text(`${b.url}/jots/${id}/`, key), [200, '<h1>one</h1>']);
    const png = await fetch(`${onB(shareUrl)}i.png`);
    assert.deepEqual([...Buffer.from(await png.arrayBuffer())], [0, 1, 2, 255]);

    assert.equal(
      (await b.execute('jots_update', { id, files: [{ path: 'index.html', content: 'two' }] })).result.files,
      2,
    );
    assert.deepEqual(await text(shareUrl), [200, 'two']);
    const web = await signInWithKey(b.url, a.apiKey);
    const view = (await web.get(`/jots/${id}/`, { accept: 'text/html' })).location ?? '';
    assert.deepEqual(await text(view), [200, 'two']);
    assert.deepEqual(await text(view.replace(b.url, a.url)), [200, 'two']);

    await b.execute('jots_share', { id, enabled: false });
    assert.equal((await text(shareUrl))[0], 404);
    assert.equal((await text(onB(shareUrl)))[0], 404);
    await a.execute('jots_delete', { id });
  });

  it('never lets deploys sent to both replicas at once pass the quota of sites or bytes', async () => {
    const sites = await a.createUser('many@example.com');
    const deploys = Array.from({ length: 12 }, (_, i) =>
      (i % 2 ? a : b).execute('jots_deploy', { files: [{ path: 'index.html', content: `${i}` }] }, sites.apiKey),
    );
    const items = await Promise.all(deploys);
    assert.equal(items.filter((r) => r.result).length, 5);
    assert.ok(items.filter((r) => !r.result).every((r) => r.code === 'GW_ERR_JOTS_QUOTA_SITES'));

    const bytes = await a.createUser('big@example.com');
    const big = { files: [{ path: 'index.html', content: 'x'.repeat(3_000) }] };
    const sized = await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).execute('jots_deploy', big, bytes.apiKey)),
    );
    assert.equal(sized.filter((r) => r.result).length, 3);
    assert.ok(sized.filter((r) => !r.result).every((r) => r.code === 'GW_ERR_JOTS_QUOTA_USER_BYTES'));
    const total = await a.db.get<{ total: number | string }>(
      'SELECT SUM(bytes) AS total FROM jot_sites WHERE owner_id = ?',
      [bytes.user.id],
    );
    assert.equal(Number(total?.total), 9_000);
  });
});
