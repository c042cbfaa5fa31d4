/**
 * @module test/host/plugin-sdk/docs-example.test
 * The complete plugin of docs/plugins.md section 1 is taken from the page as it is, built with
 * `workbench plugin build`, type-checked like a scaffolded plugin, and run in the real gateway
 * against a loopback stand-in for api.weather.example: what the page teaches works.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { PACKAGE_ROOT } from '../../../host/paths.js';
import { buildPlugin } from '../../../host/plugin-sdk/build.js';
import { scaffoldPlugin } from '../../../host/plugin-sdk/scaffold.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { startUpstream, type Upstream } from '../../helpers/upstream.js';
import { removeTempDirs, tempDir } from '../../helpers/temp-plugin.js';

const exec = promisify(execFile);

/** The first TypeScript block of the page's section 1. */
function documentedPlugin(): string {
  const page = fs.readFileSync(path.join(PACKAGE_ROOT, 'docs', 'plugins.md'), 'utf8');
  const section = page.slice(page.indexOf('## 1. '), page.indexOf('## 2. '));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  assert.ok(block, 'docs/plugins.md section 1 has a ```ts block');
  return block[1]!;
}

let dir: string;
let upstream: Upstream;
let gw: TestGateway;

before(async () => {
  dir = scaffoldPlugin('weather', tempDir()).dir;
  fs.writeFileSync(path.join(dir, 'plugin.ts'), documentedPlugin());
  await buildPlugin({ dir });
  upstream = await startUpstream();
  gw = await startGateway({
    plugins: [],
    pluginDirs: [dir],
    upstreams: { 'https://api.weather.example': upstream.origin },
  });
  await gw.connect('weather', { values: { apiKey: 'weather-key-123456' }, config: { units: 'imperial' } });
});
after(async () => {
  await gw?.close();
  await upstream?.close();
  removeTempDirs();
});

describe('the worked example of docs/plugins.md', () => {
  test('type-checks as a scaffolded plugin', async () => {
    const tsc = path.join(PACKAGE_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    await exec(process.execPath, [tsc, '-p', '.', '--noEmit'], { cwd: dir });
  });

  test('weather_current: an encoded city, the key injected, the units from the connection, a slim result', async () => {
    upstream.setHandler(() => ({
      json: {
        location: { name: 'Rio de Janeiro', id: 9 },
        temp: 88,
        summary: 'Sunny',
        time: '2026-01-01T12:00:00Z',
        raw: 'x',
      },
    }));
    const item = await gw.execute('weather_current', { city: 'Rio de Janeiro' });
    assert.deepEqual(item.result, {
      city: 'Rio de Janeiro',
      temperature: 88,
      units: 'imperial',
      conditions: 'Sunny',
      observedAt: '2026-01-01T12:00:00Z',
    });
    assert.equal(upstream.last().url, '/v1/current/Rio%20de%20Janeiro?units=imperial');
    assert.equal(upstream.last().headers['x-api-key'], 'weather-key-123456');
  });

  test("weather_current: a 404 in the plugin's own words; a 401 in the default ones; a path trick stays one segment", async () => {
    upstream.setHandler(() => ({ status: 404, json: { message: 'no such city' } }));
    assert.equal(
      (await gw.execute('weather_current', { city: 'Atlantis' })).error,
      'Unknown city "Atlantis": check the spelling.',
    );
    assert.equal(upstream.last().url, '/v1/current/Atlantis?units=imperial');
    await gw.execute('weather_current', { city: '../admin' });
    assert.equal(upstream.last().path, '/v1/current/..%2Fadmin');
    upstream.setHandler(() => ({ status: 401, json: { message: 'key expired' } }));
    assert.equal(
      (await gw.execute('weather_current', { city: 'Oslo' })).error,
      'The weather service rejected the credential (401) while trying to read the weather in Oslo: reconnect weather. The weather service said: key expired.',
    );
  });

  test('weather_list_alerts: follows Link headers, stops at the limit and hands back where to go on', async () => {
    const origin = 'https://api.weather.example';
    upstream.setHandler((req) => {
      const page = Number(req.query.get('page') ?? '1');
      const alerts = [0, 1, 2].map((i) => ({
        id: `a${page}${i}`,
        title: `Alert ${page}.${i}`,
        severity: 'high',
        until: 'tomorrow',
        noise: 'x',
      }));
      return { headers: { link: `<${origin}/v1/alerts/Oslo?page=${page + 1}>; rel="next"` }, json: alerts };
    });
    const r = (await gw.execute('weather_list_alerts', { city: 'Oslo', limit: 5 })).result;
    assert.deepEqual(
      r.alerts.map((a: { id: string }) => a.id),
      ['a10', 'a11', 'a12', 'a20', 'a21'],
    );
    assert.deepEqual(Object.keys(r.alerts[0]), ['id', 'title', 'severity', 'until']);
    assert.equal(r.next, `${origin}/v1/alerts/Oslo?page=3`);
    assert.deepEqual(
      upstream.requests.slice(-2).map((q) => q.url),
      ['/v1/alerts/Oslo?per_page=50', '/v1/alerts/Oslo?page=2'],
    );
    const more = (await gw.execute('weather_list_alerts', { city: 'Oslo', limit: 1, cursor: r.next })).result;
    assert.deepEqual([more.alerts[0].id, upstream.last().url], ['a30', '/v1/alerts/Oslo?page=3']);
  });
});
