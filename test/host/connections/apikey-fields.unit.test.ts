/**
 * @module test/host/connections/apikey-fields.unit.test
 * API-key form fields are checked against the manifest's `pattern` with RE2, linear in the value:
 * a pattern that makes a backtracking RegExp explode cannot stall the event loop every tenant shares.
 * A pattern RE2 cannot compile would match nothing, so nobody could connect: it refuses the plugin
 * at load and at `workbench plugin validate`, naming the field and why.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { validateApiKeyFields } from '../../../host/connections/apikey-fields.js';
import { PACKAGE_ROOT } from '../../../host/paths.js';
import { loadPluginDir, loadPlugins } from '../../../host/registry/load-plugins.js';
import type { ApiKeyField } from '../../../contracts/manifest.js';

const field = (pattern: string): ApiKeyField => ({ name: 'site', label: 'Site', pattern }) as ApiKeyField;

describe('API-key field patterns', () => {
  it('a whole-value match, as before', () => {
    assert.deepEqual(validateApiKeyFields([field('[a-z]+-[0-9]+')], { site: 'abc-12' }).errors, {});
    assert.match(
      validateApiKeyFields([field('[a-z]+-[0-9]+')], { site: 'abc-12x' }).errors['site'] ?? '',
      /expected format/,
    );
    assert.match(
      validateApiKeyFields([field('[a-z]+')], { site: 'x abc' }).errors['site'] ?? '',
      /expected format/,
      'anchored at both ends',
    );
  });

  it('a pattern that backtracks exponentially in JavaScript answers at once', () => {
    // with RegExp, 27 characters took 3 s and each more doubles it; 34 would take minutes
    const t0 = performance.now();
    const r = validateApiKeyFields([field('([a-z0-9]+-?)*')], { site: `${'a'.repeat(33)}!` });
    assert.match(r.errors['site'] ?? '', /expected format/);
    // (the bound leaves a busy machine room, and stays far under the minutes backtracking would take)
    assert.ok(performance.now() - t0 < 10_000, `took ${performance.now() - t0} ms`);
  });

  it('a pattern RE2 cannot compile (backreference) is never satisfied', () => {
    assert.match(validateApiKeyFields([field('(a)\\1')], { site: 'aa' }).errors['site'] ?? '', /expected format/);
  });

  it('alternatives must match the whole value too', () => {
    assert.deepEqual(validateApiKeyFields([field('us|eu-west')], { site: 'eu-west' }).errors, {});
    assert.match(validateApiKeyFields([field('us|eu')], { site: 'useu' }).errors['site'] ?? '', /expected format/);
  });
});

describe('API-key field patterns RE2 cannot compile refuse the plugin', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-apikey-patterns-'));
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  /** a plugin folder whose second API-key field carries `pattern` */
  function writePlugin(folder: string, pattern: string, more: Array<Record<string, unknown>> = []): string {
    const dir = path.join(root, folder);
    fs.mkdirSync(dir, { recursive: true });
    const fields = [
      { name: 'apiKey', label: 'API key', secret: true },
      { name: 'site', label: 'Site', pattern },
      ...more,
    ];
    fs.writeFileSync(
      path.join(dir, 'manifest.json'),
      JSON.stringify({
        name: folder,
        version: '1.0.0',
        displayName: 'Pattern test',
        description: 'An API-key plugin whose field pattern is under test.',
        auth: { type: 'apikey', fields, inject: { header: 'x-api-key', format: '{apiKey}' } },
        egress: ['api.example.com'],
        tools: [{ name: `${folder.replace(/-/g, '_')}_get`, description: 'Gets.', inputSchema: { type: 'object' } }],
      }),
    );
    fs.writeFileSync(path.join(dir, 'plugin.js'), 'export default {};');
    return dir;
  }

  const refused: Array<[string, string, RegExp]> = [
    ['lookahead', '^(?!internal)[a-z]+$', /invalid or unsupported Perl syntax: `\(\?!`/],
    ['lookbehind', '(?<=https://)[a-z.]+', /invalid named capture/],
    ['backreference', '([a-z])\\1', /invalid escape sequence: `\\1`/],
    ['named backreference', '(?<c>[a-z])\\k<c>', /invalid escape sequence: `\\k`/],
    ['invalid syntax', '[a-z', /missing closing \]/],
    ['a group closed that was never opened', 'a)|(b', /unexpected \)/],
  ];
  for (const [i, [name, pattern, why]] of refused.entries()) {
    it(`refuses ${name} at load, naming the field, the pattern and why`, () => {
      const dir = writePlugin(`refused-${i}`, pattern);
      assert.throws(
        () => loadPluginDir(dir),
        (err: Error & { file?: string; code?: string }) => {
          assert.equal(err.code, 'GW_ERR_PLUGIN_INVALID');
          assert.equal(err.file, path.join(dir, 'manifest.json'));
          assert.ok(
            err.message.startsWith(
              `auth.fields.1.pattern (field "site"): ${JSON.stringify(pattern)} is not a linear-time regular expression (RE2 syntax: lookaround and backreferences are not supported): `,
            ),
            err.message,
          );
          assert.match(err.message, why);
          return true;
        },
      );
    });
  }

  it('names every refused field at once, and loads the other plugins', () => {
    const dir = writePlugin('two-bad', '(?=x)', [
      { name: 'region', label: 'Region', pattern: '(a)\\1' },
      { name: 'fine', label: 'Fine', pattern: '[a-z]+' },
    ]);
    const good = writePlugin('all-good', '^[a-z0-9-]{1,63}$');
    const { plugins, errors } = loadPlugins([root]);
    assert.ok(
      plugins.some((p) => p.dir === good),
      'an RE2 pattern loads',
    );
    const mine = errors.find((e) => e.dir === dir);
    assert.match(
      mine?.message ?? '',
      /^auth\.fields\.1\.pattern \(field "site"\): .*; auth\.fields\.2\.pattern \(field "region"\): /,
    );
    assert.doesNotMatch(mine?.message ?? '', /"fine"/);
  });

  it('workbench plugin validate exits 1 with the same message', async () => {
    const dir = writePlugin('cli-refused', '^(?!admin).*$');
    const cli = path.join(PACKAGE_ROOT, 'dist', 'host', 'cli', 'main.js');
    const r = await promisify(execFile)(process.execPath, ['--no-node-snapshot', cli, 'plugin', 'validate', dir], {
      encoding: 'utf8',
    }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => err,
    );
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr
        .split('\n')[0]
        ?.startsWith(
          `invalid: ${path.join(dir, 'manifest.json')}: auth.fields.1.pattern (field "site"): "^(?!admin).*$" is not a linear-time regular expression`,
        ),
      true,
      r.stderr,
    );
  });
});
