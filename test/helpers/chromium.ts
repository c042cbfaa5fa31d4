/**
 * @module test/helpers/chromium
 * Debian's Chromium for the tests that drive a real browser (playwright-core, no downloads): where
 * it is, why a test is skipped without it (never in CI, which installs it), and the launch
 * arguments the tests use (no sandbox as root, nothing reaching out on its own).
 */
import fs from 'node:fs';

export const CHROMIUM = process.env['WORKBENCH_CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/** Why a Chromium test cannot run here (false when it can). */
export const chromiumSkip: string | false =
  !fs.existsSync(CHROMIUM) && !process.env['CI']
    ? `${CHROMIUM} is not installed (apt-get install chromium); CI always runs this test`
    : false;

export const LAUNCH_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];
