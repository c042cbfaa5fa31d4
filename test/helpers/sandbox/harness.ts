/**
 * @module test/helpers/sandbox/harness
 * Builds tasks, manifests, scopes and egress policies for sandbox tests, and runs one call the way
 * the host does: `sandbox.run(task, (req, delivered) => bridge.dispatch(req, scope, delivered))`,
 * recording every bridge request and result and every log line.
 */
import { createHash } from 'node:crypto';
import { after, before } from 'node:test';
import { createSandbox } from '../../../host/supervisor/index.js';
import { createBridge } from '../../../host/bridge/index.js';
import type { SandboxOptions } from '../../../host/supervisor/sandbox-options.js';
import type { SandboxInternals } from '../../../host/supervisor/create-sandbox.js';
import type { PluginManifest } from '../../../contracts/manifest.js';
import type {
  BridgeRequest,
  BridgeResult,
  EgressPolicy,
  RunOutcome,
  Sandbox,
  SandboxLogger,
  SandboxLimits,
} from '../../../host/supervisor/index.js';
import type { Bridge, CallScope, Credential } from '../../../host/bridge/index.js';

export const LIMITS: SandboxLimits = {
  memoryMb: 32,
  cpuMsPerCall: 500,
  wallMsPerCall: 2000,
  maxResultBytes: 1024 * 1024,
  maxArgsBytes: 64 * 1024,
  maxRequestsPerCall: 10,
  maxRequestBodyBytes: 16 * 1024,
};

/**
 * Time limits for a call whose test is not about time (a result's size, memory, state): a busy
 * machine, like a shared CI runner, stretches every step many times over, and LIMITS' 500 ms a step
 * and 2 s a call are meant for the tests of those limits.
 */
export const ROOMY: Pick<SandboxLimits, 'cpuMsPerCall' | 'wallMsPerCall'> = {
  cpuMsPerCall: 10_000,
  wallMsPerCall: 30_000,
};

export function egressPolicy(overrides: Partial<EgressPolicy> = {}): EgressPolicy {
  return {
    upstreams: {},
    allowPrivateCidrs: [],
    denyHosts: [],
    requestTimeoutMs: 2000,
    maxResponseBytes: 256 * 1024,
    maxRequestBodyBytes: LIMITS.maxRequestBodyBytes,
    maxRedirects: 3,
    maxBufferedBytes: 64 * 1024 * 1024,
    maxBufferedShare: 1,
    ...overrides,
  };
}

export function manifest(overrides: Partial<PluginManifest> = {}): PluginManifest {
  return {
    name: 'test-plugin',
    version: '1.0.0',
    displayName: 'Test',
    description: 'test plugin',
    auth: {
      type: 'oauth2',
      authorizationUrl: 'https://auth.example.com/a',
      tokenUrl: 'https://auth.example.com/t',
      scopes: [],
      scopeSeparator: ' ',
      pkce: true,
      authorizationParams: {},
      clientAuth: 'body',
      inject: { header: 'authorization', format: 'Bearer {token}' },
    },
    egress: ['api.example.com'],
    tools: [{ name: 'run', description: 'run', inputSchema: { type: 'object' } }],
    ...overrides,
  };
}

export interface LogLine {
  level: string;
  obj: Record<string, unknown>;
  msg: string;
}

export function captureLogger(lines: LogLine[] = []): SandboxLogger & { lines: LogLine[] } {
  const at = (level: string) => (obj: object, msg: string) =>
    void lines.push({ level, obj: obj as Record<string, unknown>, msg });
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

export interface CallSpec {
  source: string;
  tool?: string;
  args?: unknown;
  name?: string;
  manifest?: PluginManifest;
  credential?: Credential;
  limits?: Partial<SandboxLimits>;
  config?: Record<string, unknown>;
  contextKey?: string;
}

export interface CallRecord {
  outcome: RunOutcome;
  result: unknown;
  requests: BridgeRequest[];
  results: BridgeResult[];
  credentialLoads: number;
}

let seq = 0;

export function hashOf(source: string): string {
  return createHash('sha256').update(source).digest('hex');
}

export async function callTool(sandbox: Sandbox, bridge: Bridge, spec: CallSpec): Promise<CallRecord> {
  const m = spec.manifest ?? manifest(spec.name ? { name: spec.name } : {});
  const limits = { ...LIMITS, ...spec.limits };
  const ended = new AbortController();
  const record: CallRecord = {
    outcome: undefined as unknown as RunOutcome,
    result: undefined,
    requests: [],
    results: [],
    credentialLoads: 0,
  };
  const scope: CallScope = {
    manifest: m,
    getCredential: async () => {
      record.credentialLoads++;
      return spec.credential;
    },
    requestCount: { n: 0 },
    maxRequests: limits.maxRequestsPerCall,
    signal: ended.signal,
  };
  const task = {
    callId: `call-${++seq}`,
    plugin: { name: m.name, version: m.version, source: spec.source, sourceHash: hashOf(spec.source) },
    tool: spec.tool ?? 'run',
    argsJson: JSON.stringify(spec.args ?? {}),
    config: spec.config ?? {},
    limits,
    ...(spec.contextKey !== undefined ? { contextKey: spec.contextKey } : {}),
  };
  try {
    record.outcome = await sandbox.run(task, async (req, delivered) => {
      record.requests.push(req);
      const r = await bridge.dispatch(req, scope, delivered);
      record.results.push(r);
      return r;
    });
  } finally {
    ended.abort();
  }
  if (record.outcome.ok) record.result = JSON.parse(record.outcome.resultJson);
  return record;
}

/** Wraps a corpus-style `async function handler(ctx, args)` as a plugin module with tool "run". */
export function moduleOf(handlerSource: string, extraTools = ''): string {
  return `${handlerSource}\nexport default { run: handler${extraTools ? `, ${extraTools}` : ''} };\n`;
}

export function errorCode(r: CallRecord): string | undefined {
  return r.outcome.ok ? undefined : r.outcome.error.code;
}

/**
 * A real sandbox with these options and a bridge, shared by the tests of one file (or describe
 * block), started before them and closed after them. Read `sandbox` and `bridge` inside tests
 * (they are set by then).
 */
export function useSandbox(options: SandboxOptions): {
  readonly sandbox: Sandbox & SandboxInternals;
  readonly bridge: Bridge;
  run(spec: CallSpec): Promise<CallRecord>;
} {
  let sandbox: (Sandbox & SandboxInternals) | undefined;
  let bridge: Bridge | undefined;
  before(async () => {
    sandbox = await createSandbox(options);
    bridge = createBridge(egressPolicy());
  });
  after(async () => {
    await sandbox?.close();
    await bridge?.close();
  });
  const ready = () => {
    if (!sandbox || !bridge) throw new Error('useSandbox: used outside a test');
    return { sandbox, bridge };
  };
  return {
    get sandbox() {
      return ready().sandbox;
    },
    get bridge() {
      return ready().bridge;
    },
    run: (spec) => callTool(ready().sandbox, ready().bridge, spec),
  };
}

/** useSandbox with one worker, which every call of the file then shares. */
export function useOneWorkerSandbox(): ReturnType<typeof useSandbox> {
  return useSandbox({
    workers: 1,
    maxQueue: 100,
    quarantineAfterCrashes: 100,
    quarantineWindowMs: 1000,
    maxWorkerShare: 1,
  });
}
