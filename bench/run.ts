/**
 * @module bench/run
 * Entry of `npm run bench`: runs the sections in one process (start-up and memory first, while
 * the process is fresh; then end-to-end; then sandbox cost), prints the tables and writes every
 * figure as JSON to bench/results/<name>.json. Loopback only; every loop is bounded in time and count.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../host/paths.js';
import { startBenchGateway } from './bench-gateway.js';
import type { LoadResult } from './closed-loop.js';
import { e2eCases, runEndToEnd, SEED_PATHS, type E2eCase, type E2eRow } from './end-to-end.js';
import { startLoopbackUpstream } from './loopback-upstream.js';
import { parseOptions, type BenchOptions } from './options.js';
import {
  capScalingText,
  e2eTables,
  pagingText,
  resultCapText,
  sandboxTable,
  startupText,
  sweepTables,
  type SweepRun,
} from './report.js';
import {
  runCapScaling,
  runContinuationPaging,
  runResultCap,
  type CapScalingRow,
  type ContinuationPagingResult,
  type ResultCapResult,
} from './result-cap.js';
import { runSandboxCost, type SandboxCostRow } from './sandbox-cost.js';
import { startSeedGateway } from './seed-gateway.js';
import { runStartupMemory, type StartupMemoryResult } from './startup-memory.js';

interface BenchResults {
  name: string;
  startedAt: string;
  finishedAt?: string;
  command: string;
  environment: {
    node: string;
    platform: string;
    cpus: number;
    cpuModel: string;
    totalMemMb: number;
    loadAvgStart: number[];
    loadAvgEnd?: number[];
  };
  options: BenchOptions;
  startup?: StartupMemoryResult;
  endToEnd?: E2eRow[];
  /** with --sweep: the end-to-end rows once per number of concurrent callers */
  sweep?: SweepRun[];
  /** handler calls the seed-architecture gateway ran in-process (proof that its seed paths used no sandbox) */
  seedInProcessCalls?: number;
  sandboxCost?: SandboxCostRow[];
  resultCap?: ResultCapResult;
  capScaling?: CapScalingRow[];
  continuationPaging?: ContinuationPagingResult;
  /** wall time of each section, seconds */
  sectionSeconds: Record<string, number>;
}

const progress = (msg: string): void => {
  process.stderr.write(`[bench] ${msg}\n`);
};

async function main(): Promise<void> {
  let options: BenchOptions;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (err) {
    const message = (err as Error).message;
    process.stderr.write(`${message}\n`);
    process.exitCode = message.startsWith('usage:') ? 0 : 2;
    return;
  }
  const cpus = os.cpus();
  const results: BenchResults = {
    name: options.name,
    startedAt: new Date().toISOString(),
    command: `npm run bench --${process.argv.length > 2 ? ` ${process.argv.slice(2).join(' ')}` : ''}`,
    environment: {
      node: process.version,
      platform: `${process.platform} ${os.release()}`,
      cpus: cpus.length,
      cpuModel: cpus[0]?.model ?? '?',
      totalMemMb: Math.round(os.totalmem() / 1048576),
      loadAvgStart: os.loadavg().map((n) => Math.round(n * 100) / 100),
    },
    options,
    sectionSeconds: {},
  };
  const timed = async <T>(section: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      results.sectionSeconds[section] = Math.round((performance.now() - t0) / 100) / 10;
    }
  };
  const sandboxPolicy: Record<string, number | string> = {};
  if (options.workers) sandboxPolicy['workers'] = options.workers;
  if (options.callsPerWorker) sandboxPolicy['callsPerWorker'] = options.callsPerWorker;
  if (options.workerShare) sandboxPolicy['maxWorkerShare'] = options.workerShare;
  if (options.contextMode) sandboxPolicy['contextMode'] = options.contextMode;
  const policy: Record<string, unknown> = Object.keys(sandboxPolicy).length > 0 ? { sandbox: sandboxPolicy } : {};
  const upstream = await startLoopbackUpstream();
  const out: string[] = [];
  try {
    if (options.sections.includes('startup')) {
      progress(`start-up and memory (catalog, then ${options.memoryExecutions} executions)…`);
      results.startup = await timed('startup', () =>
        runStartupMemory(upstream, {
          executions: options.memoryExecutions,
          concurrency: options.clients,
          timeCapMs: options.quick ? 120_000 : 900_000,
          policy,
        }),
      );
      out.push('== 3. start-up and memory ==', startupText(results.startup), '');
    }
    if (options.sections.some((s) => s !== 'startup')) {
      const gw = await startBenchGateway({ upstreamOrigin: upstream.origin, policy });
      try {
        if (options.sections.includes('e2e')) {
          const counts = options.sweep ?? [options.clients];
          progress(`end-to-end: ${counts.join(', ')} clients, ${options.durationMs / 1000} s per path and case…`);
          const onResult = (c: E2eCase, p: string, r: LoadResult): void =>
            progress(
              `  ${c.name} / ${p}: ${r.execPerSec.toFixed(0)} exec/s, p50 ${r.latencyMs.p50.toFixed(2)} ms, p99 ${r.latencyMs.p99.toFixed(2)} ms, ${r.errors} errors`,
            );
          // the seed-architecture gateway: a second gateway (own data dir and SQLite), started in this run
          const seed = options.paths.some((p) => SEED_PATHS.includes(p))
            ? await startSeedGateway({ upstreamOrigin: upstream.origin, policy })
            : undefined;
          const cases = e2eCases().filter(
            (c) => options.caseFilter === undefined || c.name.includes(options.caseFilter),
          );
          const runs: SweepRun[] = [];
          try {
            await timed('e2e', async () => {
              for (const clients of counts) {
                if (options.sweep) progress(` ${clients} clients:`);
                const rows = await runEndToEnd(gw, seed, upstream, cases, {
                  clients,
                  durationMs: options.durationMs,
                  warmupMs: options.warmupMs,
                  maxOps: options.maxOps,
                  paths: options.paths,
                  onResult,
                });
                runs.push({ clients, rows });
              }
            });
            if (options.sweep) results.sweep = runs;
            else results.endToEnd = runs[0]?.rows ?? [];
            if (seed) {
              results.seedInProcessCalls = seed.runner.calls;
              if (seed.runner.calls === 0)
                throw new Error('the seed-architecture gateway never called its in-process runner');
            }
          } finally {
            await seed?.close();
          }
          const workers = gw.gateway.sandbox.stats().workers;
          for (const run of runs) {
            out.push(
              `== 1. execute_tools end to end (${run.clients} concurrent callers, ${workers} sandbox workers; seed = the same gateway running handlers in-process) ==`,
              e2eTables(run.rows),
              '',
            );
          }
          if (options.sweep) out.push('== 1b. ratios by load (concurrent callers) ==', sweepTables(runs), '');
        }
        if (options.sections.includes('sandbox')) {
          progress(`sandbox cost: ${options.sandboxCalls} sequential calls per row…`);
          results.sandboxCost = await timed('sandbox', () =>
            runSandboxCost(gw, upstream, {
              calls: options.sandboxCalls,
              warmup: options.quick ? 100 : 200,
              onRow: (r) =>
                progress(
                  `  ${r.tool} / ${r.mode}: overhead p50 ${r.overheadP50Ms.toFixed(3)} ms, p99 ${r.overheadP99Ms.toFixed(3)} ms`,
                ),
            }),
          );
          out.push(
            '== 2. sandbox cost per call (sequential; sandbox.run vs the handler in-process) ==',
            sandboxTable(results.sandboxCost),
            '',
          );
        }
        if (options.sections.includes('cap')) {
          progress(`result cap: ${options.capCalls} calls returning 5 MB…`);
          results.resultCap = await timed('cap', () =>
            runResultCap(gw, upstream, { calls: options.capCalls, chars: 5_000_000 }),
          );
          out.push('== 4. capping a 5 MB result (one call at a time) ==', resultCapText(results.resultCap), '');
          // paging first: the scaling case can hold the event loop for minutes (before the fix), and a
          // keep-alive socket the server closed meanwhile then fails the next client's first request
          progress(`result cap: continue_tool_result, ${options.pagingCalls} parts of a 32 MB result…`);
          results.continuationPaging = await timed('paging', () =>
            runContinuationPaging(gw, { bodyChars: 26_500_000, sample: options.pagingCalls }),
          );
          out.push(
            '== 4b. continue_tool_result over MCP, one 32 MB result (one call at a time) ==',
            pagingText(results.continuationPaging),
            '',
          );
          progress(
            `result cap: capBatch alone on ${options.capItems.join(', ')} results of 650,000 characters, ${options.capRounds} round(s) each…`,
          );
          results.capScaling = await timed('cap-scaling', () =>
            runCapScaling(gw, {
              counts: options.capItems,
              itemChars: 650_000,
              rounds: options.capRounds,
              onRow: (r) =>
                progress(`  ${r.items} items: ${r.medianMs.toFixed(0)} ms, ${r.perItemMs.toFixed(2)} ms per item`),
            }),
          );
          out.push(
            '== 4c. capBatch alone, every item over the cap (real SQLite continuation store) ==',
            capScalingText(results.capScaling),
            '',
          );
        }
      } finally {
        await gw.close();
      }
    }
  } finally {
    await upstream.close();
  }
  results.finishedAt = new Date().toISOString();
  results.environment.loadAvgEnd = os.loadavg().map((n) => Math.round(n * 100) / 100);
  const env = results.environment;
  out.unshift(
    `node ${env.node}, ${env.cpus} × ${env.cpuModel}, load average ${env.loadAvgStart[0]} at start, ${env.loadAvgEnd?.[0]} at end`,
    '',
  );
  const dir = path.join(PACKAGE_ROOT, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${options.name}.json`);
  fs.writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
  const took = Object.entries(results.sectionSeconds)
    .map(([k, v]) => `${k} ${v} s`)
    .join(', ');
  process.stdout.write(`${out.join('\n')}\nsections took: ${took}\nJSON: ${path.relative(PACKAGE_ROOT, file)}\n`);
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
