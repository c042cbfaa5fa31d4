/**
 * @module test/host/plugin-sdk/cookie-plugin-test.test
 * `workbench plugin test` on a plugin whose auth is `cookie` (the httpbin-cookie demo, built): the
 * made-up connection is a session cookie of the plugin's first domain, which the recorded
 * exchanges see in the Cookie header the gateway adds, and which comes back redacted.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, it } from 'node:test';
import { BUILTIN_PLUGINS_DIR } from '../../../host/paths.js';
import { testPlugin } from '../../../host/plugin-sdk/plugin-test.js';
import { removeTempDirs, tempDir } from '../../helpers/temp-plugin.js';

after(() => removeTempDirs());

it('runs the fixtures of a cookie plugin with a made-up session cookie in the Cookie header', async () => {
  const dir = path.join(tempDir(), 'httpbin-cookie');
  fs.mkdirSync(path.join(dir, 'fixtures'), { recursive: true });
  for (const f of ['manifest.json', 'plugin.js'])
    fs.copyFileSync(path.join(BUILTIN_PLUGINS_DIR, 'httpbin-cookie', f), path.join(dir, f));
  fs.writeFileSync(
    path.join(dir, 'fixtures', 'cookies.json'),
    JSON.stringify({
      tool: 'httpbin_cookie_get_cookies',
      args: {},
      exchanges: [
        {
          request: {
            method: 'GET',
            url: 'https://httpbin.org/cookies',
            headers: { cookie: 'workbench_test=workbench-test-cookie' },
          },
          response: { json: { cookies: { workbench_test: 'workbench-test-cookie' } } },
        },
      ],
      expect: { result: { cookies: { workbench_test: '[REDACTED]' } } },
    }),
  );
  const lines: string[] = [];
  const outcomes = await testPlugin({ dir, write: (l) => lines.push(l) });
  assert.deepEqual(
    outcomes.map((o) => o.problems),
    [[]],
    lines.join('\n'),
  );
  assert.equal(lines.at(-1), '1 passed, 0 failed');
});
