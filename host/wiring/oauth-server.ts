/**
 * @module host/wiring/oauth-server
 * The gateway's OAuth authorization server for /mcp, as the policy sets it up (oauthServer): off
 * when `enabled` is false (no metadata, no endpoints, API keys only). Client metadata documents are
 * fetched under the plugins' egress address rules and the policy's `upstreams` mapping, as provider
 * token requests are (host/connections/provider-fetch.ts).
 */
import { createUpstreamMapper } from '../bridge/index.js';
import { createProviderFetch } from '../connections/provider-fetch.js';
import { createOAuthServer, type OAuthServer } from '../oauth-server/server.js';
import type { Policy } from '../policy/schema.js';
import type { Db } from '../storage/db.js';
import type { Logger } from '../telemetry/logger.js';
import { FETCH_TIMEOUT_MS } from '../oauth-server/client-document.js';

export function createOAuth(policy: Policy, db: Db, publicUrl: string, logger: Logger): OAuthServer | undefined {
  if (!policy.oauthServer.enabled) return undefined;
  const fetch = createProviderFetch({
    mappedOrigins: Object.values(policy.upstreams),
    allowPrivateCidrs: policy.http.allowPrivateCidrs,
    timeoutMs: FETCH_TIMEOUT_MS,
  });
  return createOAuthServer({
    db,
    publicUrl,
    policy: policy.oauthServer,
    fetch,
    mapUrl: createUpstreamMapper(policy.upstreams),
    logger,
  });
}
