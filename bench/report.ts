/**
 * @module bench/report
 * Turns the sections' results into plain-text tables for stdout. Ratios are always
 * Workbench ÷ baseline for throughput (higher is better, 1.00 = as fast as in-process) and
 * Workbench − baseline for latency overhead.
 */
import type { E2eRow } from './end-to-end.js';
import type { LoadResult } from './closed-loop.js';
import type { SandboxCostRow } from './sandbox-cost.js';
import type { ResultCapResult } from './result-cap.js';
import type { StartupMemoryResult } from './startup-memory.js';

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const f0 = (n: number): string => (Number.isFinite(n) ? n.toFixed(0) : '-');
const f1 = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : '-');
/** a ratio: two decimals, or two significant digits when it is below 0.1 */
const ratio = (n: number): string => (!Number.isFinite(n) ? '-' : n >= 0.1 ? n.toFixed(2) : n.toPrecision(2));
const ms = (n: number): string => (Number.isFinite(n) ? (n < 10 ? n.toFixed(2) : n.toFixed(1)) : '-');
const lat = (r: LoadResult): string => `${ms(r.latencyMs.p50)}/${ms(r.latencyMs.p99)}`;
const errs = (...rs: LoadResult[]): string => String(rs.reduce((n, r) => n + r.errors, 0));

export function e2eTables(rows: E2eRow[]): string {
  const throughput = table(
    ['case (executions/s)', 'baseline', 'mcp', 'mcp/base', 'rest', 'rest/base', 'sandbox', 'sandbox/base', 'errors'],
    rows.map((r) => [
      r.case.name,
      f0(r.baseline.execPerSec),
      f0(r.mcp.execPerSec),
      ratio(r.mcp.execPerSec / r.baseline.execPerSec),
      f0(r.rest.execPerSec),
      ratio(r.rest.execPerSec / r.baseline.execPerSec),
      f0(r.sandbox.execPerSec),
      ratio(r.sandbox.execPerSec / r.baseline.execPerSec),
      errs(r.baseline, r.mcp, r.rest, r.sandbox),
    ]),
  );
  const latency = table(
    ['case (per request, ms p50/p99)', 'baseline', 'mcp', 'rest', 'sandbox'],
    rows.map((r) => [r.case.name, lat(r.baseline), lat(r.mcp), lat(r.rest), lat(r.sandbox)]),
  );
  const firstErrors = rows.flatMap((r) =>
    (['baseline', 'mcp', 'rest', 'sandbox'] as const).filter((k) => r[k].firstError).map((k) => `  ${r.case.name} / ${k}: ${r[k].errors} errors, first: ${r[k].firstError}`),
  );
  return [throughput, '', latency, ...(firstErrors.length ? ['', 'errors:', ...firstErrors] : [])].join('\n');
}

export function sandboxTable(rows: SandboxCostRow[]): string {
  const t = table(
    ['tool / context mode (ms)', 'calls', 'sandbox p50', 'p99', 'in-process p50', 'p99', 'overhead p50', 'p99', 'errors'],
    rows.map((r) => [`${r.tool} / ${r.mode}`, String(r.calls), ms(r.sandbox.p50), ms(r.sandbox.p99), ms(r.baseline.p50), ms(r.baseline.p99), ms(r.overheadP50Ms), ms(r.overheadP99Ms), String(r.errors)]),
  );
  const firstErrors = rows.filter((r) => r.firstError).map((r) => `  ${r.tool} / ${r.mode}: ${r.firstError}`);
  return [t, ...(firstErrors.length ? ['errors:', ...firstErrors] : [])].join('\n');
}

export function startupText(s: StartupMemoryResult): string {
  const mem = (label: string, m: StartupMemoryResult['atRest']): string[] => [label, f1(m.hostRssMb), m.sandboxRssMb === undefined ? '-' : f1(m.sandboxRssMb), f1(m.totalRssMb), f1(m.hostHeapUsedMb)];
  const lines = [
    `createGateway with ${s.plugins} plugins / ${s.tools} tools, ${s.workers} sandbox workers: ${f0(s.createGatewayMs)} ms`,
    '',
    table(
      ['resident memory (MB)', 'host rss', 'sandbox rss', 'total', 'host heap'],
      [
        mem('at rest', s.atRest),
        mem('after first call of each plugin', s.afterFirstCalls),
        mem(`after ${s.executions} executions`, s.afterCalls),
      ],
    ),
    `memory per plugin isolate (sandbox RSS growth / isolates created): ${s.perIsolateMb === undefined ? '-' : f1(s.perIsolateMb)} MB`,
    `${s.executions} executions over MCP (batches of 8, ${s.load.concurrency} clients): ${f0(s.load.execPerSec)} executions/s, ${s.load.errors} errors${s.load.firstError ? ` (first: ${s.load.firstError})` : ''}`,
    '',
    table(
      ['first sandbox call per plugin (ms)', 'first call', 'cold', 'next calls p50', 'isolates built'],
      s.coldStarts.map((c) => [c.plugin, ms(c.firstCallMs), c.coldStart ? 'yes' : 'no', ms(c.nextCallsP50Ms), String(c.isolatesCreated)]),
    ),
  ];
  return lines.join('\n');
}

export function resultCapText(r: ResultCapResult): string {
  const t = table(
    [`${r.resultChars} characters, ${r.calls} calls (ms)`, 'p50', 'p99', 'max'],
    [
      ['baseline: handler + JSON.stringify', ms(r.baseline.p50), ms(r.baseline.p99), ms(r.baseline.max)],
      [`mcp execute_tools (capped to a ${r.mcpAnswerChars}-character answer)`, ms(r.mcp.p50), ms(r.mcp.p99), ms(r.mcp.max)],
      ['rest (uncapped)', ms(r.rest.p50), ms(r.rest.p99), ms(r.rest.max)],
    ],
  );
  return r.errors ? `${t}\nerrors: ${r.errors}, first: ${r.firstError ?? ''}` : t;
}
