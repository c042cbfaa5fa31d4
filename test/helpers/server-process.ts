/**
 * @module test/helpers/server-process
 * The real server as a separate process, exactly as an operator starts it:
 * `node --no-node-snapshot dist/host/cli/main.js serve` with PORT, WORKBENCH_DATA_DIR,
 * WORKBENCH_PLUGINS_DIR and WORKBENCH_POLICY, on 127.0.0.1. A user is created first with
 * `users create --json`; the caller gets its API key.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { freePort } from './free-port.js';

export const MAIN_JS = path.join(PACKAGE_ROOT, 'dist', 'host', 'cli', 'main.js');
/** the package's bin, which `npx workbench` runs: it re-executes main.js with --no-node-snapshot */
export const BIN_JS = path.join(PACKAGE_ROOT, 'bin', 'workbench.js');

export interface ServerProcess {
  url: string;
  port: number;
  apiKey: string;
  dataDir: string;
  dbFile: string;
  proc: ChildProcess;
  /** everything the server wrote so far */
  output(): { stdout: string; stderr: string };
  /** resolves with the exit code (or the signal name) */
  exited: Promise<number | string>;
  /** SIGTERM, wait (bounded), SIGKILL if still alive; removes the data dir unless keepData */
  stop(keepData?: boolean): Promise<number | string>;
}

export interface SpawnServerOptions {
  pluginDirs: string[];
  policy: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  logLevel?: string;
  /** its own process group (pid = pgid), so a test can signal the group: process.kill(-pid, sig) */
  detached?: boolean;
  /** start it through bin/workbench.js, as `npx workbench serve` does (proc is then the wrapper) */
  viaBin?: boolean;
}

export async function spawnServer(options: SpawnServerOptions): Promise<ServerProcess> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'workbench-proc-'));
  const policyFile = path.join(dataDir, 'policy.json');
  fs.writeFileSync(policyFile, JSON.stringify(options.policy));
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...options.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    WORKBENCH_DATA_DIR: dataDir,
    WORKBENCH_PLUGINS_DIR: options.pluginDirs.join(path.delimiter),
    WORKBENCH_POLICY: policyFile,
    LOG_LEVEL: options.logLevel ?? 'warn',
  };
  const created = spawnSync(
    process.execPath,
    ['--no-node-snapshot', MAIN_JS, 'users', 'create', '--email', 'load@example.com', '--tenant', 'load', '--json'],
    {
      env,
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  if (created.status !== 0) throw new Error(`users create failed: ${created.stderr}`);
  const { apiKey } = JSON.parse(created.stdout) as { apiKey: string };

  const argv = options.viaBin ? [BIN_JS, 'serve'] : ['--no-node-snapshot', MAIN_JS, 'serve'];
  const proc = spawn(process.execPath, argv, {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached === true,
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => (stdout = (stdout + d.toString()).slice(-1_000_000)));
  proc.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-1_000_000)));
  const exited = new Promise<number | string>((resolve) =>
    proc.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  const url = `http://127.0.0.1:${port}`;
  let alive = true;
  void exited.then(() => (alive = false));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (!alive) throw new Error(`the server exited during start-up: ${stderr}`);
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`the server did not become ready within 60 s: ${stderr}`);
    }
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    port,
    apiKey,
    dataDir,
    dbFile: path.join(dataDir, 'workbench.db'),
    proc,
    output: () => ({ stdout, stderr }),
    exited,
    async stop(keepData = false) {
      if (alive) proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
      const code = await exited;
      clearTimeout(timer);
      if (!keepData) fs.rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}
