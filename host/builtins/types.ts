/**
 * @module host/builtins/types
 * What a built-in integration is: trusted host code (the browser, jots) serving tools the way a
 * plugin does — listed, searched, validated, governed by the policy, rate-limited and audited by
 * the same engine — but run in the gateway (or in processes it supervises) instead of an isolate,
 * because what it does cannot be done from one. A built-in has auth `none`, a manifest like any
 * plugin's, and one handler per tool. Handlers get the caller's user and the call's end; they throw
 * catalogue errors (contracts/errors.ts `fail`) for every refusal, which become error items.
 */
import type { PluginManifest } from '../../contracts/manifest.js';
import type { User } from '../storage/users.js';

/** What a built-in handler knows of its call. */
export interface BuiltinCall {
  user: User;
  /** aborted when the client cancels or the call's time is up: stop, and let go of what the call held */
  signal: AbortSignal;
  requestId: string;
  /** the gateway's public origin (links in results: a jot's URL, a live view) */
  publicUrl: string;
}

/** One tool's handler: validated arguments in (defaults applied), a JSON-serialisable result out. */
export type BuiltinHandler = (call: BuiltinCall, args: Record<string, unknown>) => Promise<unknown>;

export interface BuiltinIntegration {
  manifest: PluginManifest;
  /** one per tool of the manifest, by the tool's full name */
  handlers: Readonly<Record<string, BuiltinHandler>>;
  /** lets go of what it holds (browser processes, timers); called once when the gateway closes */
  close(): Promise<void>;
}
