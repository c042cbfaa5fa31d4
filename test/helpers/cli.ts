/**
 * @module test/helpers/cli
 * The real `workbench` command (the package's bin) with exactly the environment a test gives (plus
 * PATH): one-shot commands, and `serve` on 127.0.0.1 (a free port) kept running until stopped.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../host/paths.js';

export const BIN = path.join(PACKAGE_ROOT, 'bin', 'workbench.js');

/** Runs one command to its end (LOG_LEVEL silent unless given). */
export function runCli(
  env: Record<string, string>,
  ...argv: string[]
): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--no-node-snapshot', BIN, ...argv], {
    env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'silent', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export interface ServeProcess {
  /** the URL it listens on; undefined when it exited before listening */
  url: string | undefined;
  /** its exit code when it exited before listening */
  exitCode: number | null | undefined;
  /** stdout and stderr so far */
  output(): string;
  /** stderr alone so far (the first start's key goes there) */
  stderr(): string;
  /** SIGTERM, then waits for the exit (its logs are flushed by then); its exit code */
  stop(): Promise<number | null>;
}

/** Starts `workbench serve` (LOG_LEVEL info unless given); resolves once it listens, or once it exits. */
export async function startServe(env: Record<string, string>): Promise<ServeProcess> {
  const child = spawn(process.execPath, ['--no-node-snapshot', BIN, 'serve'], {
    env: { PATH: process.env['PATH'] ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stderr = '';
  const closed = once(child, 'close') as Promise<[number | null]>;
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const url = await new Promise<string | undefined>((resolve) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (m) resolve(m[1]);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void closed.then(() => resolve(undefined));
  });
  const exitCode = url === undefined ? (await closed)[0] : undefined;
  return {
    url,
    exitCode,
    output: () => output,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return (await closed)[0];
    },
  };
}
