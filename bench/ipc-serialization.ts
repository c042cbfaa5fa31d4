/**
 * @module bench/ipc-serialization
 * The host ⇄ sandbox process channel is Node's child_process IPC. This compares its two
 * serializations on the messages the channel carries under load (batches of `run` messages, echoed
 * back by a child process), side by side in one run: CPU of this process per message (sending one
 * and receiving its echo) and wall time per message, with 64 messages in flight.
 * Run: `npx tsc -p . && node dist/bench/ipc-serialization.js [--messages 20000] [--rounds 3]`.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { RunTask } from '../contracts/protocol.js';

function runMessage(id: number): { t: 'run'; id: number; task: RunTask } {
  return {
    t: 'run',
    id,
    task: {
      callId: 'c0ffee00-1111-2222-3333-444455556666',
      plugin: { name: 'fixture-http', version: '1.0.0', source: '', sourceHash: 'ab'.repeat(32) },
      tool: 'http_get',
      argsJson: '{"path":"/ping"}',
      config: {},
      limits: {
        memoryMb: 64,
        cpuMsPerCall: 1000,
        wallMsPerCall: 30_000,
        maxResultBytes: 8 << 20,
        maxArgsBytes: 256 << 10,
        maxRequestsPerCall: 25,
        maxRequestBodyBytes: 1 << 20,
      },
    },
  };
}

async function measure(
  serialization: 'json' | 'advanced',
  messages: number,
): Promise<{ cpuUs: number; wallUs: number }> {
  const child = fork(fileURLToPath(import.meta.url), ['--echo'], { serialization });
  await new Promise((resolve) => child.once('spawn', resolve));
  const batch = { t: 'batch', msgs: [0, 1, 2, 3].map(runMessage) };
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await new Promise<void>((resolve) => {
    let sent = 0;
    let got = 0;
    const pump = (): void => {
      while (sent - got < 64 && sent < messages) {
        child.send(batch);
        sent++;
      }
    };
    child.on('message', () => {
      if (++got === messages) resolve();
      else pump();
    });
    pump();
  });
  const cpu = process.cpuUsage(c0);
  const wall = performance.now() - t0;
  child.kill();
  return { cpuUs: (cpu.user + cpu.system) / messages, wallUs: (wall * 1000) / messages };
}

async function main(): Promise<void> {
  if (process.argv.includes('--echo')) {
    process.on('message', (m) => process.send?.(m));
    return;
  }
  const { values } = parseArgs({
    options: { messages: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '3' } },
  });
  const messages = Number(values.messages);
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const serialization of ['json', 'advanced'] as const) {
      const r = await measure(serialization, messages);
      console.log(
        `round ${round} ${serialization.padEnd(8)} CPU ${r.cpuUs.toFixed(1)} µs per message (send + receive its echo), wall ${r.wallUs.toFixed(1)} µs`,
      );
    }
  }
}

void main();
