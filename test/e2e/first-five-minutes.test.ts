/**
 * @module test/e2e/first-five-minutes.test
 * The README's "First five minutes" is a script a newcomer pastes into a shell right after
 * `npm start`: this test takes that very block out of README.md, points it at a gateway on
 * loopback (its URL for http://127.0.0.1:3000, a loopback page for https://example.com, the test
 * user's key for the placeholder), runs it with bash and curl, and checks each answer: the jot is
 * published and served, the browser opened the page, read its text and sent back a PNG image block.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { BROWSER_ENV } from '../helpers/browser-site.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chromiumSkip as skip } from '../helpers/chromium.js';

const PAGE = '<!doctype html><title>Example Domain</title><h1>Example Domain</h1><p>For use in examples.</p>';

/** The shell block of README.md's "First five minutes" section. */
function readmeBlock(): string {
  const readme = fs.readFileSync(path.join(PACKAGE_ROOT, 'README.md'), 'utf8');
  const section = readme.split('\n## First five minutes\n')[1]?.split('\n## ')[0];
  const block = section?.match(/```sh\n([\s\S]*?)```/)?.[1];
  assert.ok(block, 'README.md has a "First five minutes" section with a sh block');
  return block;
}

/** Each JSON-RPC answer the script printed (JSON, or the data lines of an event stream). */
function answers(output: string): { content: { type: string; text?: string; data?: string; mimeType?: string }[] }[] {
  return output
    .split('\n')
    .map((l) => l.replace(/^data: /, ''))
    .filter((l) => l.startsWith('{'))
    .map((l) => (JSON.parse(l) as { result: never }).result);
}

describe("the README's first five minutes, run as written", { skip }, () => {
  let gw: TestGateway;
  let site: http.Server;
  let siteUrl: string;

  before(async () => {
    site = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
    gw = await startGateway({
      plugins: [],
      env: BROWSER_ENV,
      // as `npm start` serves them, but with the loopback page allowed to the browser
      policy: { builtins: { browser: { allowPrivateCidrs: ['127.0.0.1/32'] }, jots: {} } },
    });
  });
  after(async () => {
    await gw?.close();
    await new Promise((resolve) => site?.close(resolve));
  });

  it('publishes a jot, opens and reads a page and takes its picture', async () => {
    const script = readmeBlock()
      .replace(/^KEY=wb_….*$/m, `KEY=${gw.apiKey}`)
      .replaceAll('http://127.0.0.1:3000', gw.url)
      .replaceAll('https://example.com', siteUrl);
    assert.doesNotMatch(script, /127\.0\.0\.1:3000|example\.com|wb_…/, 'every placeholder was replaced');
    // not execFileSync: the gateway answering the script runs in this very process
    const { stdout: output } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    const [deploy, navigate, read, shot] = answers(output);
    const item = (a: typeof deploy): { result?: Record<string, string>; error?: string } =>
      (JSON.parse(a?.content[0]?.text ?? '{}') as { results: never[] }).results[0] ?? {};

    const jot = item(deploy).result;
    assert.ok(jot?.['url'] && jot['shareUrl'], JSON.stringify(item(deploy)));
    const shared = await fetch(jot['shareUrl']);
    assert.match(await shared.text(), /Hello from an agent/);

    assert.equal(item(navigate).result?.['title'], 'Example Domain', JSON.stringify(item(navigate)));
    assert.match(JSON.stringify(item(read).result), /For use in examples/);
    const image = shot?.content.find((c) => c.type === 'image');
    assert.equal(image?.mimeType, 'image/png');
    assert.deepEqual([...Buffer.from(image?.data ?? '', 'base64').subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  });
});
