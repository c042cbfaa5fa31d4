/**
 * @module test/host/builtins/jots/jots-tools.test
 * The jots tools through a real gateway (REST and a real MCP client), against small quotas: an
 * update writes over and deletes atomically (a refused one changes nothing); list and list_files
 * show the caller's own; every quota is refused with its code, its figures in the item, and
 * nothing stored past it; bad paths and bad base64 are refused with their codes; the tools are
 * found by search_tools like any plugin's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type Item, type TestGateway } from '../../../helpers/gateway.js';
import { callJson } from '../../../helpers/mcp-call.js';

const QUOTAS = {
  maxSitesPerUser: 3,
  maxFilesPerSite: 4,
  maxFileBytes: 2000,
  maxSiteBytes: 5000,
  maxBytesPerUser: 8000,
};
const POLICY = { builtins: { browser: { enabled: false }, jots: { enabled: true, ...QUOTAS } } };

const index = (content = '<h1>hi</h1>'): { path: string; content: string } => ({ path: 'index.html', content });
const sized = (path: string, bytes: number): { path: string; content: string } => ({
  path,
  content: 'x'.repeat(bytes),
});

async function get(url: string, apiKey: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { headers: { 'x-workbench-api-key': apiKey } });
  return { status: res.status, text: await res.text() };
}

describe('the jots tools', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ plugins: [], policy: POLICY });
  });
  after(async () => gw.close());

  /** A fresh user (its own quotas) and how to run a tool as it. */
  async function someone(
    email: string,
  ): Promise<{ run: (tool: string, args?: Record<string, unknown>) => Promise<Item>; key: string; userId: string }> {
    const u = await gw.createUser(email);
    return { run: (tool, args = {}) => gw.execute(tool, args, u.apiKey), key: u.apiKey, userId: u.user.id };
  }

  /** What the user has stored: sites, files and bytes, read from the database. */
  async function stored(userId: string): Promise<{ sites: number; files: number; bytes: number }> {
    const r = await gw.db.get<{ sites: number; files: number; bytes: number | string | null }>(
      `SELECT COUNT(DISTINCT s.id) AS sites, COUNT(f.path) AS files, SUM(f.bytes) AS bytes
         FROM jot_sites s LEFT JOIN jot_files f ON f.site_id = s.id WHERE s.owner_id = ?`,
      [userId],
    );
    return { sites: Number(r?.sites ?? 0), files: Number(r?.files ?? 0), bytes: Number(r?.bytes ?? 0) };
  }

  it('are found by search_tools and run over MCP', async () => {
    const client = await gw.mcpClient();
    const found = await callJson(client, 'search_tools', { query: 'publish a static website' });
    assert.match(JSON.stringify(found.json), /jots_deploy/);
    const listed = await callJson(client, 'execute_tools', { executions: [{ tool: 'jots_list', args: {} }] });
    assert.deepEqual(listed.json.results[0].result.usage, { sites: 0, maxSites: 3, bytes: 0, maxBytes: 8000 });
  });

  it('update writes over and deletes atomically; list and list_files show the caller its own', async () => {
    const a = await someone('update@example.com');
    const { id, url } = (
      await a.run('jots_deploy', { title: 'v1', files: [index('one'), sized('a.txt', 3), sized('b.txt', 4)] })
    ).result as { id: string; url: string };
    const updated = await a.run('jots_update', {
      id,
      title: 'v2',
      files: [index('two'), sized('c/d.txt', 5)],
      delete: ['a.txt'],
    });
    assert.deepEqual(
      { ...updated.result, createdAt: 0, updatedAt: 0 },
      {
        id,
        title: 'v2',
        url,
        shared: false,
        files: 3,
        bytes: 3 + 4 + 5,
        written: 2,
        deleted: 1,
        createdAt: 0,
        updatedAt: 0,
      },
    );
    assert.equal((await get(url, a.key)).text, 'two');
    assert.equal((await get(`${url}a.txt`, a.key)).status, 404);
    const files = (await a.run('jots_list_files', { id })).result.files as {
      path: string;
      bytes: number;
      contentType: string;
      sha256: string;
    }[];
    assert.deepEqual(
      files.map((f) => [f.path, f.bytes, f.contentType]),
      [
        ['b.txt', 4, 'text/plain; charset=utf-8'],
        ['c/d.txt', 5, 'text/plain; charset=utf-8'],
        ['index.html', 3, 'text/html; charset=utf-8'],
      ],
    );
    assert.match(files[0]?.sha256 ?? '', /^[0-9a-f]{64}$/);

    // refused whole: nothing of a refused update is written
    const before = await stored(a.userId);
    const cases: [Record<string, unknown>, string][] = [
      [{ id, delete: ['index.html'] }, 'GW_ERR_JOTS_NO_INDEX'],
      [{ id, files: [sized('new.txt', 1)], delete: ['nope.txt'] }, 'GW_ERR_JOTS_FILE_NOT_FOUND'],
      [{ id, files: [sized('b.txt', 1)], delete: ['b.txt'] }, 'GW_ERR_JOTS_INVALID_PATH'],
      [{ id, files: [sized('e.txt', 1), sized('f.txt', 1)] }, 'GW_ERR_JOTS_QUOTA_FILES'],
      [{ id: '0'.repeat(24), files: [index()] }, 'GW_ERR_JOTS_NOT_FOUND'],
    ];
    for (const [args, code] of cases) assert.equal((await a.run('jots_update', args)).code, code, JSON.stringify(args));
    assert.deepEqual(await stored(a.userId), before);
    assert.equal((await get(`${url}b.txt`, a.key)).text, 'xxxx');

    // another user sees none of it
    const b = await someone('nosy@example.com');
    assert.equal((await b.run('jots_list_files', { id })).code, 'GW_ERR_JOTS_NOT_FOUND');
    assert.equal((await b.run('jots_update', { id, files: [index('mine')] })).code, 'GW_ERR_JOTS_NOT_FOUND');
    assert.deepEqual((await b.run('jots_list')).result.sites, []);
    const mine = (await a.run('jots_list')).result as {
      sites: { id: string; title: string }[];
      usage: { bytes: number };
    };
    assert.deepEqual(
      mine.sites.map((s) => [s.id, s.title]),
      [[id, 'v2']],
    );
    assert.equal(mine.usage.bytes, 12);
  });

  it('refuses every quota with its code and figures, storing nothing past it', async () => {
    const u = await someone('quota@example.com');
    const expectRefused = async (tool: string, args: Record<string, unknown>, code: string): Promise<Item> => {
      const before = await stored(u.userId);
      const item = await u.run(tool, args);
      assert.equal(item.code, code, JSON.stringify(item));
      assert.deepEqual(await stored(u.userId), before, `${code} stored something`);
      return item;
    };
    const files = await expectRefused(
      'jots_deploy',
      { files: [index(), ...['a', 'b', 'c', 'd'].map((p) => sized(p, 1))] },
      'GW_ERR_JOTS_QUOTA_FILES',
    );
    assert.deepEqual([files['limit'], files['requested']], [4, 5]);
    const big = await expectRefused(
      'jots_deploy',
      { files: [index(), sized('big.txt', 2001)] },
      'GW_ERR_JOTS_QUOTA_FILE_BYTES',
    );
    assert.deepEqual([big['path'], big['limit'], big['requested']], ['big.txt', 2000, 2001]);
    await expectRefused(
      'jots_deploy',
      { files: [index(), sized('a', 1900), sized('b', 1900), sized('c', 1900)] },
      'GW_ERR_JOTS_QUOTA_SITE_BYTES',
    );

    // the user's bytes: 4500 + 3400 stored, 200 more is over 8000
    const s1 = (
      await u.run('jots_deploy', { files: [index(''), sized('a', 1500), sized('b', 1500), sized('c', 1500)] })
    ).result.id as string;
    const s2 = (await u.run('jots_deploy', { files: [index(''), sized('a', 1700), sized('b', 1700)] })).result
      .id as string;
    assert.deepEqual(await stored(u.userId), { sites: 2, files: 7, bytes: 7900 });
    const over = await expectRefused(
      'jots_deploy',
      { files: [index(), sized('a', 189)] },
      'GW_ERR_JOTS_QUOTA_USER_BYTES',
    );
    assert.deepEqual([over['limit'], over['used'], over['requested']], [8000, 7900, 200]);
    await expectRefused('jots_update', { id: s2, files: [sized('c', 101)] }, 'GW_ERR_JOTS_QUOTA_USER_BYTES');
    // replacing a file counts its new size, not both
    assert.equal((await u.run('jots_update', { id: s1, files: [sized('a', 1600)] })).result.bytes, 4600);
    await expectRefused('jots_update', { id: s1, files: [sized('b', 2000)] }, 'GW_ERR_JOTS_QUOTA_SITE_BYTES');

    // the number of sites
    await u.run('jots_delete', { id: s1 });
    for (let i = 0; i < 2; i++) assert.ok((await u.run('jots_deploy', { files: [index()] })).result);
    const sites = await expectRefused('jots_deploy', { files: [index()] }, 'GW_ERR_JOTS_QUOTA_SITES');
    assert.deepEqual([sites['limit'], sites['used']], [3, 3]);
  });

  it('refuses bad paths, bad base64 and a site without index.html, storing nothing', async () => {
    const u = await someone('paths@example.com');
    const bad = [
      '/abs.html',
      '../up.html',
      'a/../../b.html',
      'a\\b.html',
      'nul\u0000.html',
      'tab\t.html',
      'a//b.html',
      'dir/',
      'q?.html',
      'frag#.html',
      'x'.repeat(513),
      `${'d/'.repeat(16)}f.html`,
    ];
    for (const path of bad) {
      const item = await u.run('jots_deploy', { files: [index(), { path, content: 'x' }] });
      assert.equal(item.code, 'GW_ERR_JOTS_INVALID_PATH', `${JSON.stringify(path)}: ${JSON.stringify(item)}`);
    }
    const twice = await u.run('jots_deploy', { files: [index(), { path: './index.html', content: 'again' }] });
    assert.deepEqual([twice.code, twice['path']], ['GW_ERR_JOTS_INVALID_PATH', 'index.html']);
    const b64 = await u.run('jots_deploy', {
      files: [index(), { path: 'i.png', content: 'not base64!', encoding: 'base64' }],
    });
    assert.equal(b64.code, 'GW_ERR_JOTS_BAD_CONTENT');
    assert.equal(
      (await u.run('jots_deploy', { files: [{ path: 'home.html', content: 'x' }] })).code,
      'GW_ERR_JOTS_NO_INDEX',
    );
    assert.deepEqual(await stored(u.userId), { sites: 0, files: 0, bytes: 0 });
    // "./" segments are normalised away, and the REST answer carries the code's status
    const ok = await gw.rest(
      'jots',
      {
        tool: 'deploy',
        args: {
          files: [
            { path: './index.html', content: 'ok' },
            { path: 'a/./b.css', content: '' },
          ],
        },
      },
      u.key,
    );
    assert.equal(ok.status, 200);
    assert.deepEqual(
      ((await u.run('jots_list_files', { id: ok.json.result.id })).result.files as { path: string }[]).map(
        (f) => f.path,
      ),
      ['a/b.css', 'index.html'],
    );
    const refused = await gw.rest('jots', { tool: 'deploy', args: { files: [{ path: '../x', content: '' }] } }, u.key);
    assert.deepEqual([refused.status, refused.json.code], [400, 'GW_ERR_JOTS_INVALID_PATH']);
  });
});
