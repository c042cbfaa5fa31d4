/**
 * @module host/wiring/connections
 * The connection service as the gateway runs it: OAuth clients from the environment, provider
 * URLs mapped through the policy's `upstreams`, and provider requests held to the policy's
 * private-address and timeout rules.
 */
import { createUpstreamMapper } from '../bridge/index.js';
import { clientFromEnv } from '../connections/oauth.js';
import { createProviderFetch } from '../connections/provider-fetch.js';
import { createConnectionService, type FullConnectionService } from '../connections/service.js';
import type { Vault } from '../connections/vault.js';
import type { Policy } from '../policy/schema.js';
import type { Db } from '../storage/db.js';
import type { Logger } from '../telemetry/logger.js';

export function createConnections(
  policy: Policy,
  db: Db,
  vault: Vault,
  env: NodeJS.ProcessEnv,
  logger: Logger,
): FullConnectionService {
  const mapUrl = createUpstreamMapper(policy.upstreams);
  const providerFetch = createProviderFetch({
    mappedOrigins: Object.values(policy.upstreams),
    allowPrivateCidrs: policy.http.allowPrivateCidrs,
    timeoutMs: policy.http.requestTimeoutMs,
  });
  return createConnectionService({
    db,
    vault,
    clientFor: clientFromEnv(env),
    mapUrl,
    upstreams: policy.upstreams,
    logger,
    fetch: providerFetch,
  });
}
