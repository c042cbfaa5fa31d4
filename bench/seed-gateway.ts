/**
 * @module bench/seed-gateway
 * BENCH-ONLY: a second gateway with the seed's architecture — the same `createGateway` (fastify,
 * MCP and REST transports, caller auth, policy, validation, SQLite audit, metrics, the bridge
 * with credential injection), but whose engine runs handlers in-process (bench/in-process-runner)
 * instead of in the sandbox. It is started like the bench gateway (its own temp data dir and
 * SQLite file, its own user, key and connection); then, in this file only, the engine's
 * `sandbox` is replaced by the in-process runner and the real sandbox is closed, so that a call
 * that still reached it would fail (and show as an error) rather than be timed. No host/ or
 * sandbox/ code knows about this; config, CLI and environment cannot select it.
 */
import { startBenchGateway, type BenchGateway, type BenchGatewayOptions } from './bench-gateway.js';
import { createInProcessRunner, type InProcessRunner } from './in-process-runner.js';

export interface SeedGateway extends BenchGateway {
  runner: InProcessRunner;
}

export async function startSeedGateway(options: BenchGatewayOptions): Promise<SeedGateway> {
  const gw = await startBenchGateway(options);
  const runner = createInProcessRunner(gw.gateway.registry);
  try {
    gw.gateway.engine.sandbox = runner;
    await gw.gateway.sandbox.close();
  } catch (err) {
    await gw.close();
    throw err;
  }
  return { ...gw, runner };
}
