/**
 * @module host/supervisor/check-outcome
 * The host does not trust the sandbox process: an isolate escape would own it. Every outcome that
 * comes back over IPC is re-checked here (shape, error code from the catalogue, result size and
 * nesting depth) before the host sees it.
 */
import { jsonDepth, MAX_RESULT_DEPTH } from '../../common/json-depth.js';
import {
  SANDBOX_ERROR_CODES,
  type RunHops,
  type RunOutcome,
  type RunStats,
  type RunTask,
  type SandboxErrorCode,
} from '../../contracts/protocol.js';

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);

export function failure(code: SandboxErrorCode, message: string, stats?: Partial<RunStats>): RunOutcome {
  return {
    ok: false,
    error: { code, message },
    stats: { wallMs: 0, cpuMs: 0, requests: 0, coldStart: false, ...stats },
  };
}

/** RunHops as sent (benchmarks' diagnostics): four finite numbers, or nothing */
function hopsOf(v: unknown): RunHops | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const h = v as Record<string, unknown>;
  const keys = ['received', 'started', 'finished', 'sent'] as const;
  if (!keys.every((k) => typeof h[k] === 'number' && Number.isFinite(h[k]))) return undefined;
  return {
    received: h['received'] as number,
    started: h['started'] as number,
    finished: h['finished'] as number,
    sent: h['sent'] as number,
  };
}

export function checkOutcome(raw: unknown, task: RunTask): RunOutcome {
  if (typeof raw !== 'object' || raw === null)
    return failure('GW_ERR_SANDBOX_CRASHED', 'the sandbox returned a malformed outcome');
  const o = raw as Record<string, unknown>;
  const s = (typeof o['stats'] === 'object' && o['stats'] !== null ? o['stats'] : {}) as Record<string, unknown>;
  const stats: RunStats = {
    wallMs: num(s['wallMs']),
    cpuMs: num(s['cpuMs']),
    requests: num(s['requests']),
    coldStart: s['coldStart'] === true,
  };
  const hops = hopsOf(s['hops']);
  if (hops) stats.hops = hops;
  if (o['ok'] === true) {
    const json = o['resultJson'];
    if (typeof json !== 'string') return failure('GW_ERR_SANDBOX_RESULT_INVALID', 'the result is not JSON text', stats);
    const bytes = Buffer.byteLength(json, 'utf8');
    if (bytes > task.limits.maxResultBytes)
      return failure(
        'GW_ERR_SANDBOX_RESULT_TOO_LARGE',
        `the result is ${bytes} bytes; the limit is ${task.limits.maxResultBytes}`,
        stats,
      );
    if (jsonDepth(json) > MAX_RESULT_DEPTH)
      return failure(
        'GW_ERR_SANDBOX_RESULT_INVALID',
        `the result is nested deeper than ${MAX_RESULT_DEPTH} levels`,
        stats,
      );
    return { ok: true, resultJson: json, stats };
  }
  const e = (typeof o['error'] === 'object' && o['error'] !== null ? o['error'] : {}) as Record<string, unknown>;
  const code = (SANDBOX_ERROR_CODES as readonly string[]).includes(e['code'] as string)
    ? (e['code'] as SandboxErrorCode)
    : 'GW_ERR_SANDBOX_CRASHED';
  const message = typeof e['message'] === 'string' ? e['message'].slice(0, 2000) : 'the call failed';
  return failure(code, message, stats);
}
