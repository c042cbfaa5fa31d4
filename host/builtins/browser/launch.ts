/**
 * @module host/builtins/browser/launch
 * Starting Chromium: Debian's `/usr/bin/chromium` (or `WORKBENCH_CHROMIUM_PATH`), driven by
 * playwright-core, which downloads nothing. Headless, with its sandbox — which Chromium refuses to
 * run as root: as root the gateway asks for `WORKBENCH_CHROMIUM_NO_SANDBOX=1` before it runs
 * Chromium without it (docs/operations.md, Browser). Background traffic, QUIC and non-proxied
 * WebRTC are off, every connection goes through a proxy (socks-proxy.ts), and Chromium gets a
 * minimal environment: the gateway's own holds secrets (the encryption key, OAuth client secrets).
 * Every way this fails is GW_ERR_BROWSER_UNAVAILABLE with what to do about it.
 */
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { fail } from '../../../contracts/errors.js';

export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium';

export interface ChromiumSettings {
  executablePath: string;
  /** WORKBENCH_CHROMIUM_NO_SANDBOX: run Chromium without its sandbox (required when running as root) */
  noSandbox: boolean;
  asRoot: boolean;
  /** V8 heap of one renderer, MiB */
  maxPageHeapMb: number;
}

const truthy = (v: string | undefined): boolean => v !== undefined && /^(1|true|yes)$/i.test(v.trim());

export function chromiumSettings(env: NodeJS.ProcessEnv, maxPageHeapMb: number): ChromiumSettings {
  return {
    executablePath: env['WORKBENCH_CHROMIUM_PATH']?.trim() || DEFAULT_CHROMIUM_PATH,
    noSandbox: truthy(env['WORKBENCH_CHROMIUM_NO_SANDBOX']),
    asRoot: typeof process.getuid === 'function' && process.getuid() === 0,
    maxPageHeapMb,
  };
}

/** Chromium's switches besides Playwright's own (which add headless mode, and --no-sandbox only when asked). */
export function chromiumArgs(s: ChromiumSettings): string[] {
  return [
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-default-apps',
    '--disable-extensions',
    '--disable-sync',
    '--disable-quic',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--dns-prefetch-disable',
    '--disable-smooth-scrolling',
    '--mute-audio',
    '--no-first-run',
    '--no-default-browser-check',
    '--no-pings',
    // WebRTC may not send UDP around the proxy (ICE to private addresses)
    '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
    '--webrtc-ip-handling-policy=disable_non_proxied_udp',
    `--js-flags=--max-old-space-size=${s.maxPageHeapMb}`,
  ];
}

/** What Chromium inherits: enough to run, nothing of the gateway's secrets. */
function chromiumEnv(): Record<string, string> {
  const keep = [
    'PATH',
    'HOME',
    'TMPDIR',
    'LANG',
    'LC_ALL',
    'TZ',
    'FONTCONFIG_PATH',
    'XDG_CONFIG_HOME',
    'XDG_CACHE_HOME',
  ];
  const env: Record<string, string> = {};
  for (const k of keep) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  return env;
}

/** Why Chromium cannot be started here, as GW_ERR_BROWSER_UNAVAILABLE; undefined when it may be tried. */
export function unavailability(s: ChromiumSettings): Error | undefined {
  try {
    fs.accessSync(s.executablePath, fs.constants.X_OK);
  } catch {
    return fail('GW_ERR_BROWSER_UNAVAILABLE', {
      message: `the browser is not available on this server: no Chromium at ${s.executablePath}. The operator installs it (Debian/Ubuntu: apt-get install chromium) or sets WORKBENCH_CHROMIUM_PATH to a Chromium executable`,
    });
  }
  if (s.asRoot && !s.noSandbox)
    return fail('GW_ERR_BROWSER_UNAVAILABLE', {
      message:
        "the browser is not available on this server: the gateway runs as root, where Chromium's sandbox cannot run. The operator runs the gateway as an unprivileged user (docs/operations.md, Browser), or sets WORKBENCH_CHROMIUM_NO_SANDBOX=1 to run Chromium without its sandbox (not for production)",
    });
  return undefined;
}

export interface Launched {
  browser: Browser;
  /** the browser process (its renderers are its descendants) */
  pid: number;
}

/** Starts Chromium with every connection through `proxyServer`; GW_ERR_BROWSER_UNAVAILABLE when it cannot. */
export async function launchChromium(s: ChromiumSettings, proxyServer: string): Promise<Launched> {
  const refused = unavailability(s);
  if (refused) throw refused;
  let browser: Browser;
  try {
    browser = await chromium.launch({
      executablePath: s.executablePath,
      headless: true,
      chromiumSandbox: !s.noSandbox,
      args: chromiumArgs(s),
      proxy: { server: proxyServer },
      env: chromiumEnv(),
      timeout: 30_000,
      // the gateway's own shutdown closes the browser (wiring/shutdown.ts)
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
  } catch (err) {
    // Playwright's message holds Chromium's own output: its telling line, else the first
    const lines = String((err as Error).message ?? err).split('\n');
    const telling =
      lines.find((l) => /No usable sandbox|shared librar|as root|cannot open display/i.test(l)) ?? lines[0] ?? '';
    throw fail(
      'GW_ERR_BROWSER_UNAVAILABLE',
      {
        message: `the browser is not available on this server: Chromium did not start (${telling.trim().slice(0, 300)}). The operator finds the whole reason in the gateway's log (docs/operations.md, Browser)`,
      },
      { cause: err },
    );
  }
  try {
    return { browser, pid: await browserPid(browser) };
  } catch (err) {
    await browser.close().catch(() => undefined);
    throw fail(
      'GW_ERR_BROWSER_UNAVAILABLE',
      { message: 'the browser is not available on this server: Chromium exited as it started; retry' },
      { cause: err },
    );
  }
}

/** The browser process's id, as Chromium reports it. */
async function browserPid(browser: Browser): Promise<number> {
  const cdp = await browser.newBrowserCDPSession();
  try {
    const { processInfo } = (await cdp.send('SystemInfo.getProcessInfo')) as {
      processInfo: { type: string; id: number }[];
    };
    return processInfo.find((p) => p.type === 'browser')?.id ?? 0;
  } finally {
    await cdp.detach().catch(() => undefined);
  }
}
