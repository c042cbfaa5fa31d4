/**
 * @module host/wiring/sign-in
 * How people sign in to the portal on this gateway: the policy's methods (signIn.apiKey,
 * signIn.loginLinks) and rule (signIn.sso), and the OpenID Connect provider of WORKBENCH_OIDC_*,
 * whose callback is on the public URL. A configuration in which nobody could sign in stops
 * start-up. The provider is discovered in the background at start (a provider that is down then
 * does not stop the gateway: the first sign-in tries again).
 */
import type { GatewayConfig } from '../config.js';
import { GatewayError } from '../errors.js';
import type { Policy } from '../policy/schema.js';
import type { PortalSignIn } from '../portal/portal.js';
import { readSsoConfig } from '../portal/sso/sso-config.js';
import type { Logger } from '../telemetry/logger.js';

/** The path of the redirect URI to register at the provider, under the public URL. */
export const SSO_CALLBACK_PATH = '/login/sso/callback';

export async function createPortalSignIn(
  config: GatewayConfig,
  policy: Policy,
  env: NodeJS.ProcessEnv,
  logger: Logger,
): Promise<PortalSignIn> {
  const provider = readSsoConfig(env);
  const { apiKey, loginLinks, sso: rule } = policy.signIn;
  if (!provider && !apiKey && !loginLinks)
    throw new GatewayError(
      'GW_ERR_CONFIG_INVALID',
      'the policy turns off signing in with an API key and with links (signIn.apiKey, signIn.loginLinks) and no single sign-on is configured (WORKBENCH_OIDC_ISSUER): nobody could sign in to the portal',
    );
  if (!provider) return { apiKey, loginLinks };
  const redirectUri = `${config.publicUrl.replace(/\/+$/, '')}${SSO_CALLBACK_PATH}`;
  // loaded only where single sign-on is configured (the OIDC library takes ~50 ms to load)
  const { OidcSignIn } = await import('../portal/sso/oidc-client.js');
  const client = new OidcSignIn(provider, redirectUri, logger);
  client.discover().then(
    () => logger.info({ issuer: provider.issuer, redirectUri }, 'single sign-on: provider discovered'),
    () => undefined, // logged by discover; the first sign-in tries again
  );
  return { apiKey, loginLinks, sso: { client, rule } };
}
