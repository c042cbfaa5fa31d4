/**
 * @module test/host/builtins/browser/browser-parts.unit.test
 * The browser built-in's pure parts: which URLs an agent may open, key names as agents write them,
 * the slimming of rendered text, the live view's input forms, Chromium's switches and environment
 * decisions (sandbox, root, a missing executable), and the memory reading from /proc.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AddressGuard } from '../../../../host/builtins/browser/address-guard.js';
import { keyPresses, normaliseKey } from '../../../../host/builtins/browser/keys.js';
import { chromiumArgs, chromiumSettings, unavailability } from '../../../../host/builtins/browser/launch.js';
import { treeMemoryBytes } from '../../../../host/builtins/browser/memory-watch.js';
import { slimText } from '../../../../host/builtins/browser/read-text.js';
import { liveInputOf } from '../../../../host/portal/browser-routes.js';
import { isWorkbenchError } from '../../../../contracts/errors.js';
import { netError } from '../../../../host/builtins/browser/browser-errors.js';
import { browserPolicySchema } from '../../../../host/policy/browser-policy.js';

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (err) {
    return isWorkbenchError(err) ? err.code : 'not a catalogue error';
  }
};

describe('the URLs an agent may open', () => {
  it('are http(s) only: file:, chrome:, view-source:, data:, javascript:, about: and non-URLs are refused', () => {
    for (const ok of ['http://example.com/', 'https://example.com/a?b=c#d'])
      assert.equal(AddressGuard.pageUrl(ok).href, new URL(ok).href);
    for (const bad of [
      'file:///etc/passwd',
      'chrome://settings',
      'chrome-extension://abc/x.html',
      'view-source:https://example.com',
      'data:text/html,<script>1</script>',
      'javascript:alert(1)',
      'about:blank',
      'ftp://example.com/',
      'not a url',
      '/relative',
    ])
      assert.equal(
        codeOf(() => AddressGuard.pageUrl(bad)),
        'GW_ERR_BROWSER_URL_REFUSED',
        bad,
      );
  });

  it('a host is judged by its addresses: loopback, private, link-local (metadata) refused, allowed CIDRs reached', async () => {
    const guard = new AddressGuard(['10.20.0.0/16'], (host, _o, cb) =>
      cb(null, host === 'intranet.test' ? [{ address: '10.20.1.2', family: 4 }] : [{ address: '10.9.9.9', family: 4 }]),
    );
    assert.deepEqual(await guard.target('169.254.169.254', 80), { kind: 'refused', range: 'linkLocal' });
    assert.deepEqual(await guard.target('127.0.0.1', 80), { kind: 'refused', range: 'loopback' });
    assert.deepEqual(await guard.target('[::ffff:7f00:1]', 80), { kind: 'refused', range: 'loopback' });
    assert.deepEqual(await guard.target('intranet.test', 443), { kind: 'allowed', address: '10.20.1.2' });
    assert.deepEqual(await guard.target('elsewhere.test', 443), { kind: 'refused', range: 'private' });
    assert.equal((await guard.refusal('http://169.254.169.254/latest/meta-data'))?.range, 'linkLocal');
    assert.equal(await guard.refusal('http://intranet.test/'), undefined);
  });

  it('reaches an origin the operator named as an upstream target, at that port only, whatever its address', async () => {
    const guard = new AddressGuard([], undefined, ['http://127.0.0.1:4010', 'https://sso.internal.test']);
    assert.deepEqual(await guard.target('127.0.0.1', 4010), { kind: 'allowed', address: '127.0.0.1' });
    assert.deepEqual(await guard.target('127.0.0.1', 4011), { kind: 'refused', range: 'loopback' });
    assert.equal(await guard.refusal('http://127.0.0.1:4010/login'), undefined);
    assert.equal((await guard.refusal('http://127.0.0.1:22/'))?.range, 'loopback');
  });
});

describe('key names', () => {
  it('are turned into the browser spelling, one press per space-separated name', () => {
    assert.equal(normaliseKey('enter'), 'Enter');
    assert.equal(normaliseKey('ctrl+a'), 'Control+a');
    assert.equal(normaliseKey('Cmd+Shift+K'), 'Meta+Shift+K');
    assert.equal(normaliseKey('esc'), 'Escape');
    assert.equal(normaliseKey('f5'), 'F5');
    assert.equal(normaliseKey('ctrl++'), 'Control++');
    assert.deepEqual(keyPresses(' Tab  tab enter '), ['Tab', 'Tab', 'Enter']);
    assert.equal(
      codeOf(() => keyPresses('a '.repeat(51))),
      'GW_ERR_VALIDATION_INVALID_ARGS',
    );
  });
});

describe('readable text', () => {
  it('collapses spaces within lines and blank lines between them', () => {
    assert.equal(slimText('  Title \r\n\r\n\r\n\r\n  a   b\t\tc\u00a0d \n\n\n e  '), 'Title\n\na b c d\n\ne');
  });
});

describe("the live view's input forms", () => {
  it('describe a click, key, text or scroll, or nothing', () => {
    assert.deepEqual(liveInputOf({ kind: 'click', x: '10', y: '20.5' }), {
      kind: 'click',
      x: 10,
      y: 20.5,
      button: 'left',
    });
    assert.deepEqual(liveInputOf({ kind: 'key', key: 'Control+a' }), { kind: 'key', key: 'Control+a' });
    assert.deepEqual(liveInputOf({ kind: 'text', text: 'é' }), { kind: 'text', text: 'é' });
    assert.deepEqual(liveInputOf({ kind: 'scroll', x: '1', y: '2', dx: '0', dy: '-300' }), {
      kind: 'scroll',
      x: 1,
      y: 2,
      dx: 0,
      dy: -300,
    });
    for (const bad of [
      {},
      { kind: 'click', x: '-1', y: '2' },
      { kind: 'click', x: '1' },
      { kind: 'click', x: '1', y: '1', button: 'fourth' },
      { kind: 'key', key: '' },
      { kind: 'text', text: 'x'.repeat(1001) },
      { kind: 'scroll', x: '1', y: '1', dx: 'NaN', dy: '0' },
      { kind: 'navigate', url: 'file:///etc/passwd' },
    ])
      assert.equal(liveInputOf(bad as Record<string, string>), undefined, JSON.stringify(bad));
  });
});

describe('starting Chromium', () => {
  const policy = browserPolicySchema.parse({});

  it('reads its path and sandbox switch from the environment, with the defaults', () => {
    const s = chromiumSettings({}, policy.maxPageHeapMb);
    assert.equal(s.executablePath, '/usr/bin/chromium');
    assert.equal(s.noSandbox, false);
    const t = chromiumSettings({ WORKBENCH_CHROMIUM_PATH: '/opt/c/chrome', WORKBENCH_CHROMIUM_NO_SANDBOX: '1' }, 256);
    assert.equal(t.executablePath, '/opt/c/chrome');
    assert.equal(t.noSandbox, true);
    assert.ok(chromiumArgs(t).includes('--js-flags=--max-old-space-size=256'));
    for (const flag of [
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
      '--disable-quic',
    ])
      assert.ok(chromiumArgs(t).includes(flag), flag);
    assert.ok(
      !chromiumArgs(t).includes('--no-sandbox'),
      "the sandbox switch is Playwright's chromiumSandbox, never an arg",
    );
  });

  it('is refused with a way out: no executable, or root without the explicit no-sandbox switch', () => {
    const missing = unavailability({
      executablePath: '/nonexistent/chromium',
      noSandbox: false,
      asRoot: false,
      maxPageHeapMb: 64,
    });
    assert.ok(isWorkbenchError(missing) && missing.code === 'GW_ERR_BROWSER_UNAVAILABLE');
    assert.match(missing.message, /apt-get install chromium/);
    assert.match(missing.message, /WORKBENCH_CHROMIUM_PATH/);
    const exe = process.execPath;
    const root = unavailability({ executablePath: exe, noSandbox: false, asRoot: true, maxPageHeapMb: 64 });
    assert.ok(isWorkbenchError(root) && root.code === 'GW_ERR_BROWSER_UNAVAILABLE');
    assert.match(root.message, /unprivileged user/);
    assert.equal(unavailability({ executablePath: exe, noSandbox: true, asRoot: true, maxPageHeapMb: 64 }), undefined);
    assert.equal(
      unavailability({ executablePath: exe, noSandbox: false, asRoot: false, maxPageHeapMb: 64 }),
      undefined,
    );
  });
});

describe('the memory of a process tree', () => {
  it('is read from /proc for a live process, and unknown for none', async (t) => {
    const bytes = await treeMemoryBytes(process.pid);
    if (bytes === undefined) return t.skip('no /proc on this system');
    assert.ok(bytes > 10 * 1024 * 1024 && bytes < 16 * 1024 * 1024 * 1024, String(bytes));
    assert.equal(await treeMemoryBytes(2 ** 30), undefined);
  });
});

describe('a page that could not be loaded, as the agent reads it', () => {
  const at = 'net::ERR_X at https://example.com/';
  it('says the gateway could not reach the host when the address proxy reached no one', () => {
    const err = netError('ERR_SOCKS_CONNECTION_FAILED', [], at);
    assert.ok(isWorkbenchError(err));
    assert.equal(err.code, 'GW_ERR_BROWSER_NAVIGATION_FAILED');
    assert.match(err.message, /ERR_SOCKS_CONNECTION_FAILED: the gateway could not connect to the host/);
  });
  it('names the refused address when the proxy refused it, and a timeout as a timeout', () => {
    const refused = netError('ERR_SOCKS_CONNECTION_FAILED', [{ host: '10.0.0.1', range: 'private', at: 0 }], at);
    assert.ok(isWorkbenchError(refused));
    assert.equal(refused.code, 'GW_ERR_BROWSER_ADDRESS_REFUSED');
    const slow = netError('ERR_TIMED_OUT', [], at);
    assert.ok(isWorkbenchError(slow));
    assert.equal(slow.code, 'GW_ERR_BROWSER_NAVIGATION_TIMEOUT');
  });
  it('adds no hint it does not have', () => {
    const other = netError('ERR_CERT_DATE_INVALID', [], at);
    assert.match(other.message, /net::ERR_CERT_DATE_INVALID \(net::ERR_X/);
  });
});
