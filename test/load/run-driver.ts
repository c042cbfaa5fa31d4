/**
 * @module test/load/run-driver
 * Runs the load driver (dist/test/load/driver.js) as a second process and returns its summary.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../host/paths.js';
import type { LoadSummary } from './driver.js';

export const DRIVER_JS = path.join(PACKAGE_ROOT, 'dist', 'test', 'load', 'driver.js');

export interface DriverOptions {
  url: string;
  apiKey: string;
  sessions: number;
  durationMs: number;
  batch: number;
  maxCalls?: number;
  /** kill the driver if it has not finished by then */
  timeoutMs: number;
}

export async function runDriver(o: DriverOptions): Promise<LoadSummary> {
  const child = spawn(process.execPath, [DRIVER_JS], {
    env: {
      ...process.env,
      LOAD_URL: o.url,
      LOAD_API_KEY: o.apiKey,
      LOAD_SESSIONS: String(o.sessions),
      LOAD_DURATION_MS: String(o.durationMs),
      LOAD_BATCH: String(o.batch),
      LOAD_MAX_CALLS: String(o.maxCalls ?? 0),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-20_000)));
  const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(timer);
  const line = stdout.split('\n').find((l) => l.startsWith('SUMMARY '));
  if (code !== 0 || !line) throw new Error(`load driver exited ${code}: ${stderr}`);
  return JSON.parse(line.slice('SUMMARY '.length)) as LoadSummary;
}
