/**
 * @module host/supervisor/probe
 * A probe checks, in the sandbox, that a plugin module can run at all: it compiles, instantiates
 * (no imports) and evaluates within the plugin's limits, and its default export has a function for
 * every tool of its manifest. The host never evaluates plugin code (invariant 1), so start-up and
 * `workbench plugin validate` ask the sandbox: the probe is a task like a call (same worker, same
 * context preparation, same limits), with `probe` set instead of a handler being called.
 *
 * A probe catches mistakes (an `import "node:fs"`, a syntax error, a top-level throw, a missing
 * handler); it is not a security check: the module's own top-level code has run and could answer
 * anything. Failures of the sandbox itself (unavailable, crashed, overloaded) say nothing about
 * the plugin: they come back as `checked: false`, and the caller keeps the plugin.
 */
import { randomUUID } from 'node:crypto';
import type { HttpHandler, RunOutcome, RunTask, SandboxErrorCode, SandboxLimits } from '../../contracts/protocol.js';
import type { Sandbox } from './sandbox-options.js';

export interface ProbedPlugin {
  name: string;
  version: string;
  source: string;
  sourceHash: string;
}

export type ProbeVerdict =
  /** the module loads and exports a function for every tool */
  | { checked: true; ok: true }
  /**
   * the module cannot serve its tools: why, in words naming the problem. `timedOut`: it ran out of
   * its time limits, which a busy machine (every plugin probed at once at start-up) can cause too,
   * so the caller may probe it again alone (load-plugins.ts probePlugins)
   */
  | { checked: true; ok: false; problem: string; timedOut?: true }
  /** the sandbox could not run the probe (not the plugin's fault) */
  | { checked: false; reason: string };

/** Codes of a probe's failure that are the module's own doing. */
const MODULE_FAULTS: readonly SandboxErrorCode[] = [
  'GW_ERR_SANDBOX_LOAD_FAILED',
  'GW_ERR_SANDBOX_TOOL_MISSING',
  'GW_ERR_SANDBOX_TIMEOUT',
  'GW_ERR_SANDBOX_MEMORY',
];

/** nothing at the top level of a module can reach ctx.http; refused all the same */
const NO_HTTP: HttpHandler = () =>
  Promise.resolve({ ok: false, error: { code: 'GW_ERR_BRIDGE_CALL_ENDED', message: 'a probe makes no requests' } });

export function probeTask(plugin: ProbedPlugin, tools: readonly string[], limits: SandboxLimits): RunTask {
  return {
    callId: randomUUID(),
    plugin: { ...plugin },
    tool: '',
    argsJson: '{}',
    config: {},
    limits,
    probe: [...tools],
  };
}

const list = (names: readonly string[]): string => names.map((n) => `"${n}"`).join(', ');

/** Reads a probe's outcome. */
export function probeVerdict(outcome: RunOutcome, tools: readonly string[], limits: SandboxLimits): ProbeVerdict {
  if (!outcome.ok) {
    const { code, message } = outcome.error;
    if (!MODULE_FAULTS.includes(code)) return { checked: false, reason: `${code}: ${message}` };
    const what =
      code === 'GW_ERR_SANDBOX_TIMEOUT'
        ? `the module's top-level code ran longer than its limits allow (cpuMsPerCall ${limits.cpuMsPerCall} ms of CPU, wallMsPerCall ${limits.wallMsPerCall} ms): every call would fail the same way`
        : code === 'GW_ERR_SANDBOX_MEMORY'
          ? `the module's top-level code ran out of memory (memoryMb ${limits.memoryMb}): ${message}`
          : code === 'GW_ERR_SANDBOX_TOOL_MISSING' && /before initialization/.test(message)
            ? `the module's default export cannot be read: its top-level code has not finished (a top-level await that never settles?): ${message}`
            : message.replace(/^the plugin module failed to load: /, 'the module failed to load: ');
    return {
      checked: true,
      ok: false,
      problem: what,
      ...(code === 'GW_ERR_SANDBOX_TIMEOUT' ? { timedOut: true as const } : {}),
    };
  }
  let answer: unknown;
  try {
    answer = JSON.parse(outcome.resultJson);
  } catch {
    answer = undefined;
  }
  const a = (typeof answer === 'object' && answer !== null ? answer : {}) as { noDefault?: unknown; missing?: unknown };
  if (!Array.isArray(a.missing) || !a.missing.every((n) => typeof n === 'string' && tools.includes(n))) {
    return { checked: false, reason: 'the probe answered in an unexpected shape' };
  }
  const missing = a.missing as string[];
  if (a.noDefault === true) {
    return {
      checked: true,
      ok: false,
      problem: `the module has no default export object; write \`export default { ${tools[0] ?? 'tool_name'}: async (ctx, args) => … }\` with a function for each tool`,
    };
  }
  if (missing.length > 0) {
    return {
      checked: true,
      ok: false,
      problem: `the default export has no function for tool${missing.length > 1 ? 's' : ''} ${list(missing)} of manifest.json (tools must be functions of \`export default { … }\`, named as in the manifest)`,
    };
  }
  return { checked: true, ok: true };
}

/** Probes one plugin in the sandbox (never rejects). */
export async function probePlugin(
  sandbox: Pick<Sandbox, 'run'>,
  plugin: ProbedPlugin,
  tools: readonly string[],
  limits: SandboxLimits,
): Promise<ProbeVerdict> {
  const outcome = await sandbox.run(probeTask(plugin, tools, limits), NO_HTTP);
  return probeVerdict(outcome, tools, limits);
}
