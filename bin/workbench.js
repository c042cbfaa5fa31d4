#!/usr/bin/env node
// The package's CLI entry. isolated-vm needs --no-node-snapshot on Node >= 20, and a flag given to
// a running process comes too late, so the CLI re-executes itself once with the flag.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const main = path.join(here, '..', 'dist', 'host', 'cli', 'main.js');
const child = spawn(process.execPath, ['--no-node-snapshot', main, ...process.argv.slice(2)], { stdio: 'inherit' });
// A signal sent to this process alone (kill <pid>, docker stop, systemd's ExecReload) is passed on.
// One sent to the process group reaches the child directly as well, so it gets two: it drains once
// and ignores repeats, and two plugin reloads (SIGHUP) asked for at once run as one after the other.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => {
  if (signal) {
    // say so (the child could not), and exit as a shell reports a death by signal: 128 + its number
    process.stderr.write(`workbench: the workbench process was ended by ${signal}\n`);
    process.exitCode = 128 + (os.constants.signals[signal] ?? 0);
  } else process.exitCode = code ?? 1;
});
