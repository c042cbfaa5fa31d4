/**
 * @module host/connections/service
 * The connection service: each user's connection per integration, stored sealed (vault), looked up
 * cheaply by the engine, decrypted and refreshed only when a call needs the credential, saved by the
 * OAuth callback, the API-key form and `connections import`, and removed with revocation at the
 * provider on disconnect. "Connected" is the stored status, which refresh keeps truthful. This
 * module puts the steps together: connection-reads, connection-saves, refresh-sweep, disconnect.
 */
import { EventEmitter } from 'node:events';
import type { Db } from '../storage/db.js';
import { createConnectionReads } from './connection-reads.js';
import { createConnectionSaves } from './connection-saves.js';
import { ConnectionStore } from './connection-store.js';
import { mappedHostsOf } from './cookie-capture.js';
import { instanceRulesOf, type InstanceRules } from './instance-url.js';
import { disconnectConnection } from './disconnect.js';
import type { OAuthClient, OAuthHttpOptions } from './oauth.js';
import { PendingConnects } from './pending.js';
import { createRefresher, type ConnectionLogger } from './refresh.js';
import { createRefreshSweep } from './refresh-sweep.js';
import type { ConnectionChange, FullConnectionService, ServiceCore } from './service-types.js';
import type { Vault } from './vault.js';

export type { ConnectionLogger } from './refresh.js';
export type {
  ConnectionChange,
  CookieCapture,
  DisconnectResult,
  FullConnectionService,
  IntegrationConnectionState,
  RefreshSweep,
} from './service-types.js';

export interface ConnectionServiceDeps {
  db: Db;
  vault: Vault;
  /** OAuth2 client credentials for a plugin, or for one instance of it (see clientFromEnv); undefined when not configured */
  clientFor(pluginName: string, instance?: string): OAuthClient | undefined;
  /** the rules a connection's instance is checked against (default: https, public addresses only) */
  instanceRules?: InstanceRules;
  /** the instances of a plugin with a client of their own (see instanceOriginsFromEnv; default none) */
  instanceOrigins?(pluginName: string): string[];
  fetch?: typeof fetch;
  now?: () => number;
  logger?: ConnectionLogger;
  /** maps provider URLs (token, revocation, authorization) to the ones used: the policy's `upstreams` */
  mapUrl?: (url: string) => string;
  /** the policy's `upstreams`, for the cookies a capture brings back from a mapped target (mappedHostsOf) */
  upstreams?: Readonly<Record<string, string>>;
  /** refresh tokens expiring within this many ms (default 60 000) */
  refreshSkewMs?: number;
  /** longest a refresh lease is held (default 30 000) */
  refreshLeaseMs?: number;
  /** lifetime of a connect link, and of the provider round trip after it is opened (default 10 min) */
  linkTtlMs?: number;
}

const SILENT: ConnectionLogger = { info() {}, warn() {} };

export function createConnectionService(deps: ConnectionServiceDeps): FullConnectionService {
  const now = deps.now ?? Date.now;
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const http: OAuthHttpOptions = {};
  if (deps.fetch) http.fetch = deps.fetch;
  if (deps.mapUrl) http.mapUrl = deps.mapUrl;
  const core: ServiceCore = {
    store: new ConnectionStore(deps.db),
    vault: deps.vault,
    now,
    logger: deps.logger ?? SILENT,
    http,
    clientFor: deps.clientFor,
    instanceRules: deps.instanceRules ?? instanceRulesOf({ allowPrivateCidrs: [], denyHosts: [] }, {}),
    mappedHosts: mappedHostsOf(deps.upstreams ?? {}),
    emit: (c: ConnectionChange): void => void events.emit('change', c),
  };
  const refresher = createRefresher({
    store: core.store,
    vault: deps.vault,
    clientFor: deps.clientFor,
    http,
    now,
    logger: core.logger,
    skewMs: deps.refreshSkewMs ?? 60_000,
    leaseMs: deps.refreshLeaseMs ?? 30_000,
    onChange: core.emit,
  });
  return {
    events,
    http,
    clientFor: deps.clientFor,
    instanceRules: core.instanceRules,
    instanceOrigins: deps.instanceOrigins ?? (() => []),
    pending: new PendingConnects({
      db: deps.db,
      vault: deps.vault,
      now,
      ...(deps.linkTtlMs ? { ttlMs: deps.linkTtlMs } : {}),
    }),
    now,
    ...createConnectionReads(core, refresher),
    ...createConnectionSaves(core),
    refreshExpiring: createRefreshSweep(core, refresher),
    disconnect: (userId, manifest) => disconnectConnection(core, userId, manifest),
  };
}
