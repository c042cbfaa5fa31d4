/**
 * @module host/supervisor
 * The host's door to the sandbox process (it runs in the gateway process, beside the credentials;
 * the sandbox process it starts holds none). The rest of the host imports only this file and
 * contracts/:
 *   - `createSandbox(options)` starts a supervised sandbox process that runs plugin code in
 *     isolated-vm isolates on a Piscina pool; `sandbox.run(task, http)` never rejects.
 *   - `probePlugin(sandbox, plugin, tools, limits)` checks in the sandbox that a plugin module
 *     compiles, evaluates and exports a function for every tool (the host never evaluates it).
 *   - `createBridge(egress, options)` (host/bridge/index.ts, not this file) is the host side of `ctx.http`: egress policy,
 *     credential injection, redaction, the buffer budget. Wire them as
 *     `sandbox.run(task, (req, delivered) => bridge.dispatch(req, scope, delivered))`.
 */
export { createSandbox } from './create-sandbox.js';
export type {
  Sandbox,
  SandboxFault,
  SandboxOptions,
  SandboxStats,
  SandboxLogger,
  SharedStrike,
  StrikeStore,
  StruckPlugin,
} from './sandbox-options.js';
export * from '../../contracts/protocol.js';
// A probe: does a plugin module load and export a function for each tool? (start-up, plugin validate)
export { probePlugin, probeTask, probeVerdict, type ProbedPlugin, type ProbeVerdict } from './probe.js';
