#!/usr/bin/env node
// The package's CLI entry. isolated-vm needs --no-node-snapshot on Node >= 20, and a flag given to
// a running process comes too late, so the CLI re-executes itself once with the flag.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const main = path.join(here, '..', 'dist', 'host', 'cli', 'main.js');
const child = spawn(process.execPath, ['--no-node-snapshot', main, ...process.argv.slice(2)], { stdio: 'inherit' });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => { process.exitCode = code ?? (signal ? 1 : 0); });
