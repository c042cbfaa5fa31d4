/**
 * @module sandbox
 * Public entry of the sandbox subsystem. The host imports only this file, `protocol.ts` and
 * `manifest.ts`:
 *   - `createSandbox(options)` starts a supervised sandbox process that runs plugin code in
 *     isolated-vm isolates on a Piscina pool; `sandbox.run(task, http)` never rejects.
 *   - `probePlugin(sandbox, plugin, tools, limits)` checks in the sandbox that a plugin module
 *     compiles, evaluates and exports a function for every tool (the host never evaluates it).
 *   - `createBridge(egress, options)` is the host side of `ctx.http`: egress policy, credential
 *     injection, redaction, the buffer budget. Wire them as
 *     `sandbox.run(task, (req, delivered) => bridge.dispatch(req, scope, delivered))`.
 */
export { createSandbox } from './supervisor/create-sandbox.js';
export type { Sandbox, SandboxFault, SandboxOptions, SandboxStats, SandboxLogger, SharedStrike, StrikeStore, StruckPlugin } from './sandbox-options.js';
export { createBridge, createUpstreamMapper, type Bridge, type BridgeBufferStats, type BridgeOptions } from './bridge/create-bridge.js';
export type { CallScope, Credential } from './bridge/types.js';
export type { Resolver } from './bridge/safe-lookup.js';
export * from './protocol.js';
// A probe: does a plugin module load and export a function for each tool? (start-up, plugin validate)
export { probePlugin, probeTask, probeVerdict, type ProbedPlugin, type ProbeVerdict } from './probe.js';
// The address policy, for host-side requests to addresses that come from manifests (OAuth
// token and revocation endpoints): the same rules as ctx.http.
export { createSafeLookup } from './bridge/safe-lookup.js';
export { parseCidrs, ipLiteralOf, judgeAddress, type Cidr } from './bridge/address-policy.js';
