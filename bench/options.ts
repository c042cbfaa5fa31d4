/**
 * @module bench/options
 * Command-line options of `npm run bench -- [options]`. --quick is a smoke-sized run (16 clients,
 * 1.2 s per end-to-end path and case after 0.4 s of warm-up, 5,000 executions for memory) that
 * finishes in about two and a half minutes. --sweep 1,2,4,…,64 runs the end-to-end cases once per
 * number of concurrent callers instead of once with --clients, and adds a table of the ratios by
 * load: where the machine's CPU saturates, and what each ratio is below and above that point.
 */
import { E2E_PATHS, type E2ePath } from './end-to-end.js';

export type Section = 'startup' | 'e2e' | 'sandbox' | 'cap';
export const SECTIONS: readonly Section[] = ['startup', 'e2e', 'sandbox', 'cap'];

export interface BenchOptions {
  quick: boolean;
  /** name of the JSON file under bench/results/ */
  name: string;
  clients: number;
  /** end to end once per number of concurrent callers, instead of once with `clients` */
  sweep: number[] | undefined;
  durationMs: number;
  warmupMs: number;
  /** cap on measured operations per path and case */
  maxOps: number;
  /** sequential calls per sandbox-cost row */
  sandboxCalls: number;
  /** executions made before the "after N calls" memory reading */
  memoryExecutions: number;
  /** calls of the 5 MB result case */
  capCalls: number;
  /** batch sizes of the capBatch scaling case (results of 650,000 characters each) */
  capItems: number[];
  /** rounds per batch size of the capBatch scaling case */
  capRounds: number;
  /** continue_tool_result calls of the paging case (parts spread over a 32 MB body) */
  pagingCalls: number;
  /** sandbox worker threads (the policy default when undefined) */
  workers: number | undefined;
  /** sandbox.callsPerWorker for the gateway under test (policy default when undefined) */
  callsPerWorker: number | undefined;
  /** sandbox.maxWorkerShare for the gateway under test (policy default when undefined) */
  workerShare: number | undefined;
  /** sandbox.contextMode for the gateway under test (policy default, per-call, when undefined) */
  contextMode: 'per-call' | 'per-tenant' | undefined;
  sections: Section[];
  /** run only the end-to-end cases whose name contains this text */
  caseFilter: string | undefined;
  /** end-to-end paths to drive (the seed gateway is started only when a seed path is among them) */
  paths: E2ePath[];
}

export const USAGE = `usage: npm run bench -- [--quick] [--name NAME] [--clients N | --sweep N,N,…] [--duration SECONDS] [--warmup SECONDS]
                       [--max-ops N] [--sandbox-calls N] [--executions N] [--workers N] [--calls-per-worker N] [--worker-share X] [--context-mode per-call|per-tenant] [--only startup,e2e,sandbox,cap]
                       [--cap-items N,N,…] [--case TEXT] [--paths baseline,seed-mcp,mcp,seed-rest,rest,sandbox]`;

function positiveInt(flag: string, value: string | undefined): number {
  const n = Number(value);
  if (value === undefined || !Number.isInteger(n) || n <= 0)
    throw new Error(`${flag} needs a positive integer\n${USAGE}`);
  return n;
}

function positiveNumber(flag: string, value: string | undefined): number {
  const n = Number(value);
  if (value === undefined || !Number.isFinite(n) || n < 0)
    throw new Error(`${flag} needs a number of seconds\n${USAGE}`);
  return n;
}

export function parseOptions(argv: string[]): BenchOptions {
  const quick = argv.includes('--quick');
  const o: BenchOptions = {
    quick,
    name: quick ? 'quick' : 'full',
    clients: quick ? 16 : 64,
    sweep: undefined,
    durationMs: quick ? 1200 : 10_000,
    warmupMs: quick ? 400 : 2000,
    maxOps: 2_000_000,
    sandboxCalls: quick ? 2000 : 5000,
    memoryExecutions: quick ? 5000 : 100_000,
    capCalls: quick ? 6 : 50,
    capItems: [50, 500],
    capRounds: quick ? 1 : 3,
    pagingCalls: quick ? 20 : 60,
    workers: undefined,
    callsPerWorker: undefined,
    workerShare: undefined,
    contextMode: undefined,
    sections: [...SECTIONS],
    caseFilter: undefined,
    paths: [...E2E_PATHS],
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] as string;
    const value = argv[i + 1];
    switch (flag) {
      case '--quick':
        break;
      case '--name':
        if (!value || !/^[\w.-]+$/.test(value))
          throw new Error(`--name needs a file name (letters, digits, . _ -)\n${USAGE}`);
        o.name = value;
        i++;
        break;
      case '--clients':
        o.clients = positiveInt(flag, value);
        i++;
        break;
      case '--sweep': {
        const list = (value ?? '').split(',');
        const counts = list.map((v) => positiveInt(flag, v));
        if (new Set(counts).size !== counts.length)
          throw new Error(`${flag} needs distinct numbers of callers\n${USAGE}`);
        o.sweep = counts.sort((a, b) => a - b);
        i++;
        break;
      }
      case '--duration':
        o.durationMs = positiveNumber(flag, value) * 1000;
        i++;
        break;
      case '--warmup':
        o.warmupMs = positiveNumber(flag, value) * 1000;
        i++;
        break;
      case '--max-ops':
        o.maxOps = positiveInt(flag, value);
        i++;
        break;
      case '--sandbox-calls':
        o.sandboxCalls = positiveInt(flag, value);
        i++;
        break;
      case '--executions':
        o.memoryExecutions = positiveInt(flag, value);
        i++;
        break;
      case '--workers':
        o.workers = positiveInt(flag, value);
        i++;
        break;
      case '--calls-per-worker':
        o.callsPerWorker = positiveInt(flag, value);
        i++;
        break;
      case '--worker-share': {
        const share = Number(value);
        if (!(share > 0 && share <= 1)) throw new Error(`${flag} needs a number in (0, 1]\n${USAGE}`);
        o.workerShare = share;
        i++;
        break;
      }
      case '--context-mode':
        if (value !== 'per-call' && value !== 'per-tenant')
          throw new Error(`${flag} needs per-call or per-tenant\n${USAGE}`);
        o.contextMode = value;
        i++;
        break;
      case '--only': {
        const wanted = (value ?? '').split(',').filter(Boolean);
        const bad = wanted.filter((s) => !SECTIONS.includes(s as Section));
        if (wanted.length === 0 || bad.length > 0)
          throw new Error(`--only takes a list of ${SECTIONS.join(', ')}\n${USAGE}`);
        o.sections = wanted as Section[];
        i++;
        break;
      }
      case '--cap-items':
        o.capItems = (value ?? '').split(',').map((v) => positiveInt(flag, v));
        i++;
        break;
      case '--case':
        if (!value) throw new Error(`--case needs a piece of a case name, e.g. "echo_args"\n${USAGE}`);
        o.caseFilter = value;
        i++;
        break;
      case '--paths': {
        const wanted = (value ?? '').split(',').filter(Boolean);
        const bad = wanted.filter((p) => !E2E_PATHS.includes(p as E2ePath));
        if (wanted.length === 0 || bad.length > 0)
          throw new Error(`--paths takes a list of ${E2E_PATHS.join(', ')}\n${USAGE}`);
        o.paths = wanted as E2ePath[];
        i++;
        break;
      }
      case '--help':
      case '-h':
        throw new Error(USAGE);
      default:
        throw new Error(`unknown option "${flag}"\n${USAGE}`);
    }
  }
  return o;
}
