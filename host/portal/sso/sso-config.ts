/**
 * @module host/portal/sso/sso-config
 * The OpenID Connect provider the portal signs people in with, read from the environment:
 * WORKBENCH_OIDC_ISSUER (turns single sign-on on), WORKBENCH_OIDC_CLIENT_ID,
 * WORKBENCH_OIDC_CLIENT_SECRET, WORKBENCH_OIDC_SCOPES (default "openid email profile") and
 * WORKBENCH_OIDC_NAME (the provider's name on the sign-in button; default the issuer's host). Who
 * may sign in is the policy's `signIn.sso` rule, not configured here. A bad value stops start-up
 * with a message naming the variable, as host/config.ts does.
 */
import { GatewayError } from '../../errors.js';

/** How long a sign-in may take at the provider (the life of the browser's sign-in cookie). */
export const SSO_SIGN_IN_TTL_MS = 10 * 60_000;

export interface SsoProviderConfig {
  /** the issuer identifier, exactly as the provider's discovery document states it */
  issuer: string;
  clientId: string;
  /** undefined: a public client (PKCE only, token_endpoint_auth_method none) */
  clientSecret: string | undefined;
  scopes: string[];
  /** the provider's name as people know it ("Google", "Okta") */
  displayName: string;
  /** whether the issuer may be spoken to over plain http (a provider on this machine only) */
  insecureLoopback: boolean;
}

const VARS = [
  'WORKBENCH_OIDC_ISSUER',
  'WORKBENCH_OIDC_CLIENT_ID',
  'WORKBENCH_OIDC_CLIENT_SECRET',
  'WORKBENCH_OIDC_SCOPES',
  'WORKBENCH_OIDC_NAME',
] as const;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

const invalid = (message: string): GatewayError => new GatewayError('GW_ERR_CONFIG_INVALID', message);

/** The provider configured in `env`, or undefined when WORKBENCH_OIDC_ISSUER is not set. */
export function readSsoConfig(env: NodeJS.ProcessEnv): SsoProviderConfig | undefined {
  const value = (name: (typeof VARS)[number]): string | undefined => env[name]?.trim() || undefined;
  const issuerText = value('WORKBENCH_OIDC_ISSUER');
  if (issuerText === undefined) {
    const stray = VARS.filter((name) => value(name) !== undefined);
    if (stray.length > 0)
      throw invalid(`${stray.join(', ')} set without WORKBENCH_OIDC_ISSUER: set the issuer to turn single sign-on on`);
    return undefined;
  }
  const { issuer, insecureLoopback } = parseIssuer(issuerText);
  const clientId = value('WORKBENCH_OIDC_CLIENT_ID');
  if (clientId === undefined)
    throw invalid('WORKBENCH_OIDC_CLIENT_ID is required with WORKBENCH_OIDC_ISSUER (the client id the provider gave)');
  const scopes = (value('WORKBENCH_OIDC_SCOPES') ?? 'openid email profile').split(/[\s,]+/).filter(Boolean);
  if (!scopes.includes('openid'))
    throw invalid(`WORKBENCH_OIDC_SCOPES must include "openid" (and usually "email"), got "${scopes.join(' ')}"`);
  const displayName = value('WORKBENCH_OIDC_NAME') ?? new URL(issuer).hostname;
  if (displayName.length > 60 || /[\u0000-\u001f\u007f]/.test(displayName))
    throw invalid('WORKBENCH_OIDC_NAME must be at most 60 characters, without control characters');
  return {
    issuer,
    clientId,
    clientSecret: value('WORKBENCH_OIDC_CLIENT_SECRET'),
    scopes,
    displayName,
    insecureLoopback,
  };
}

/**
 * The issuer must be https; plain http only for a provider on this machine (a test or a local
 * Keycloak), where nothing on the network can read or change the answers.
 */
function parseIssuer(text: string): { issuer: string; insecureLoopback: boolean } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid(`WORKBENCH_OIDC_ISSUER must be the provider's issuer URL (https://…), got "${text.slice(0, 200)}"`);
  }
  const loopback = LOOPBACK.has(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    throw invalid(
      `WORKBENCH_OIDC_ISSUER must be an https URL (plain http only for a provider on this machine), got "${text.slice(0, 200)}"`,
    );
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '')
    throw invalid('WORKBENCH_OIDC_ISSUER must be the issuer identifier alone: no query, fragment or credentials');
  // openid-client compares it with the discovery document's `issuer` as URLs (a trailing slash aside)
  return { issuer: text, insecureLoopback: url.protocol === 'http:' };
}
