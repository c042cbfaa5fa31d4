/**
 * @module test/faults/group-signals
 * Shutdown signals as operators really send them: to the whole process group (Ctrl-C in a
 * terminal, systemd's KillMode=control-group, `timeout`, `kill -- -PGID`), which reaches the
 * sandbox process as well as the gateway. The real server runs in its own process group with a call
 * in flight on a slow loopback upstream; after the signal the call still completes with 200, the
 * process exits 0, and no sandbox crash or restart is logged. Through bin/workbench.js (what `npx
 * workbench serve` runs) a group signal reaches the gateway twice, from the terminal and from the
 * wrapper; an operator or systemd may send SIGTERM twice: a repeat during the drain is ignored
 * (and logged once), not the end of the process. When the gateway is killed outright (SIGKILL), its
 * sandbox process goes with it and the wrapper says what happened.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PACKAGE_ROOT } from '../../host/paths.js';
import { spawnServer, type ServerProcess, type SpawnServerOptions } from '../helpers/server-process.js';
import { startFaultUpstream, type FaultUpstream } from '../helpers/fault-upstream.js';

const FAULT_PLUGINS = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'fault-plugins');

let up: FaultUpstream;
before(async () => {
  up = await startFaultUpstream('slow');
  up.slowMs = 1500;
});
after(() => up.close());

const until = async (check: () => boolean, what: string): Promise<void> => {
  for (let i = 0; i < 600 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(check(), `waited in vain for ${what}`);
};

/** A server in its own process group, with one slow call in flight on it. */
async function serverWithCallInFlight(
  options: Partial<SpawnServerOptions> = {},
): Promise<{ server: ServerProcess; call: Promise<{ status: number; text: string }> }> {
  const server = await spawnServer({
    pluginDirs: [FAULT_PLUGINS],
    policy: { upstreams: { 'https://api.faults.test': up.origin }, sandbox: { workers: 1 } },
    logLevel: 'info',
    detached: true,
    ...options,
  });
  const seen = up.requests;
  const call = fetch(`${server.url}/rest/fixture-faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${server.apiKey}` },
    body: JSON.stringify({ tool: 'faults_slow', args: { tag: 'in-flight' } }),
  }).then(
    async (r) => ({ status: r.status, text: await r.text() }),
    (err: Error & { cause?: { code?: string } }) => ({ status: 0, text: err.cause?.code ?? err.message }),
  );
  await until(() => up.requests > seen, 'the call to reach the upstream');
  return { server, call };
}

function assertDrained(server: ServerProcess, answer: { status: number; text: string }, code: number | string): void {
  const { stdout, stderr } = server.output();
  const log = stdout + stderr;
  assert.equal(answer.status, 200, `${answer.text}\n${log.slice(-3000)}`);
  assert.match(answer.text, /"tag":"in-flight"/);
  assert.equal(code, 0, log.slice(-3000));
  assert.doesNotMatch(log, /sandbox process (died|exited)/);
  assert.equal(log.match(/sandbox process ready/g)?.length, 1, 'no sandbox process was started during the shutdown');
  assert.equal(log.match(/shutting down: draining calls in flight/g)?.length, 1, log.slice(-3000));
}

describe('faults: a shutdown signal sent to the process group', () => {
  it(
    'SIGTERM to the group (main.js): the sandbox process outlives it, the call in flight gets 200, exit 0',
    { timeout: 60_000 },
    async () => {
      const { server, call } = await serverWithCallInFlight();
      try {
        process.kill(-(server.proc.pid as number), 'SIGTERM');
        assertDrained(server, await call, await server.exited);
      } finally {
        await server.stop();
      }
    },
  );

  it(
    'SIGINT to the group through bin/workbench.js: the gateway gets it from the terminal and from the wrapper and drains once, exit 0',
    { timeout: 60_000 },
    async () => {
      const { server, call } = await serverWithCallInFlight({ viaBin: true });
      try {
        process.kill(-(server.proc.pid as number), 'SIGINT');
        assertDrained(server, await call, await server.exited);
        // the wrapper forwards the signal the gateway also received from the group; when the second
        // arrives before the first was handled, the kernel merges them (a standard signal is not
        // queued: seen on a loaded machine), so the repeat is logged at most once, and never drains twice
        assert.ok(
          (server.output().stdout.match(/SIGINT during the shutdown ignored/g)?.length ?? 0) <= 1,
          server.output().stdout.slice(-2000),
        );
      } finally {
        await server.stop();
      }
    },
  );
});

describe('faults: SIGTERM sent twice', () => {
  it(
    'the second SIGTERM during the drain is ignored and logged once; the call in flight gets 200, exit 0',
    { timeout: 60_000 },
    async () => {
      const { server, call } = await serverWithCallInFlight();
      try {
        server.proc.kill('SIGTERM');
        await until(() => /shutting down: draining calls in flight/.test(server.output().stdout), 'the drain to start');
        server.proc.kill('SIGTERM');
        await until(
          () =>
            /SIGTERM during the shutdown ignored/.test(server.output().stdout) ||
            server.proc.exitCode !== null ||
            server.proc.signalCode !== null,
          'the repeat to be logged',
        );
        server.proc.kill('SIGTERM');
        assertDrained(server, await call, await server.exited);
        assert.equal(server.output().stdout.match(/during the shutdown ignored/g)?.length, 1, 'logged once');
      } finally {
        await server.stop();
      }
    },
  );
});

/** pids of a process's children (Linux) */
const childrenOf = (pid: number): number[] =>
  fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);

/** running (a zombie, waiting for whichever process reaps orphans here, has ended) */
const alive = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

describe('faults: the gateway killed outright under bin/workbench.js', () => {
  it(
    'SIGKILL: the wrapper says so on stderr and exits 137; the sandbox process ends with the gateway',
    { timeout: 60_000 },
    async () => {
      const server = await spawnServer({
        pluginDirs: [FAULT_PLUGINS],
        policy: { sandbox: { workers: 1 } },
        viaBin: true,
        detached: true,
      });
      try {
        const [gateway] = childrenOf(server.proc.pid as number);
        assert.ok(gateway);
        const [sandboxProcess] = childrenOf(gateway);
        assert.ok(sandboxProcess);
        process.kill(gateway, 'SIGKILL');
        assert.equal(await server.exited, 137, server.output().stderr.slice(-2000));
        assert.match(server.output().stderr, /workbench: the workbench process was ended by SIGKILL/);
        await until(() => !alive(sandboxProcess), 'the sandbox process to exit');
      } finally {
        await server.stop();
      }
    },
  );
});
