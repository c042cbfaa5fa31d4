/**
 * @module host/wiring/connections
 * The connection service as the gateway runs it: OAuth clients from the environment (the default's
 * and each instance's), provider URLs mapped through the policy's `upstreams`, provider requests
 * held to the policy's private-address and timeout rules, and a connection's own instance checked
 * against the same rules.
 */
import { createUpstreamMapper, type Resolver } from '../bridge/index.js';
import { instanceRulesOf } from '../connections/instance-url.js';
import { clientFromEnv, instanceOriginsFromEnv } from '../connections/oauth.js';
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
  resolver?: Resolver,
): FullConnectionService {
  const mapUrl = createUpstreamMapper(policy.upstreams);
  const providerFetch = createProviderFetch({
    mappedOrigins: Object.values(policy.upstreams),
    allowPrivateCidrs: policy.http.allowPrivateCidrs,
    timeoutMs: policy.http.requestTimeoutMs,
    allowHttp: policy.http.allowHttpInstances,
  });
  return createConnectionService({
    db,
    vault,
    clientFor: clientFromEnv(env),
    instanceOrigins: instanceOriginsFromEnv(env),
    instanceRules: instanceRulesOf(policy.http, policy.upstreams, resolver),
    mapUrl,
    upstreams: policy.upstreams,
    logger,
    fetch: providerFetch,
  });
}
