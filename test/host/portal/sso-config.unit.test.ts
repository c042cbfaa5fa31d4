/**
 * @module test/host/portal/sso-config.unit.test
 * WORKBENCH_OIDC_* as start-up reads them (host/portal/sso/sso-config.ts): off without an issuer
 * (and a stray variable without one is a mistake said so), https only but for a provider on this
 * machine, a client id required, "openid" required among the scopes, a name for the button; and a
 * policy that turns off API keys and links with no provider configured stops start-up, because
 * nobody could sign in.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isGatewayError } from '../../../host/errors.js';
import { parsePolicy } from '../../../host/policy/load.js';
import { readSsoConfig } from '../../../host/portal/sso/sso-config.js';
import { createLogger } from '../../../host/telemetry/logger.js';
import { createPortalSignIn } from '../../../host/wiring/sign-in.js';
import type { GatewayConfig } from '../../../host/config.js';

const refused = (env: NodeJS.ProcessEnv, message: RegExp): void =>
  assert.throws(
    () => readSsoConfig(env),
    (err: unknown) => isGatewayError(err) && err.code === 'GW_ERR_CONFIG_INVALID' && message.test(err.message),
  );

describe('single sign-on configuration', () => {
  it('is off without WORKBENCH_OIDC_ISSUER, and a variable set without it is refused', () => {
    assert.equal(readSsoConfig({}), undefined);
    assert.equal(readSsoConfig({ WORKBENCH_OIDC_ISSUER: '  ' }), undefined);
    refused({ WORKBENCH_OIDC_CLIENT_ID: 'x' }, /WORKBENCH_OIDC_CLIENT_ID set without WORKBENCH_OIDC_ISSUER/);
  });

  it('reads the provider, with defaults for the scopes and the name', () => {
    assert.deepEqual(
      readSsoConfig({ WORKBENCH_OIDC_ISSUER: 'https://accounts.google.com', WORKBENCH_OIDC_CLIENT_ID: 'id-1' }),
      {
        issuer: 'https://accounts.google.com',
        clientId: 'id-1',
        clientSecret: undefined,
        scopes: ['openid', 'email', 'profile'],
        displayName: 'accounts.google.com',
        insecureLoopback: false,
      },
    );
    const full = readSsoConfig({
      WORKBENCH_OIDC_ISSUER: 'http://127.0.0.1:8080/realms/acme',
      WORKBENCH_OIDC_CLIENT_ID: 'workbench',
      WORKBENCH_OIDC_CLIENT_SECRET: ' s3cret ',
      WORKBENCH_OIDC_SCOPES: 'openid,email groups',
      WORKBENCH_OIDC_NAME: 'Acme Keycloak',
    });
    assert.equal(full?.clientSecret, 's3cret');
    assert.deepEqual(full?.scopes, ['openid', 'email', 'groups']);
    assert.equal(full?.displayName, 'Acme Keycloak');
    assert.equal(full?.insecureLoopback, true, 'plain http to a provider on this machine');
  });

  it('refuses plain http to another machine, a missing client id, scopes without openid and a bad name', () => {
    const base = { WORKBENCH_OIDC_CLIENT_ID: 'id' };
    refused({ ...base, WORKBENCH_OIDC_ISSUER: 'http://idp.example.com' }, /must be an https URL/);
    refused({ ...base, WORKBENCH_OIDC_ISSUER: 'not a url' }, /issuer URL/);
    refused({ ...base, WORKBENCH_OIDC_ISSUER: 'https://idp.example.com/?x=1' }, /no query/);
    refused({ WORKBENCH_OIDC_ISSUER: 'https://idp.example.com' }, /WORKBENCH_OIDC_CLIENT_ID is required/);
    refused(
      { ...base, WORKBENCH_OIDC_ISSUER: 'https://idp.example.com', WORKBENCH_OIDC_SCOPES: 'email profile' },
      /must include "openid"/,
    );
    refused({ ...base, WORKBENCH_OIDC_ISSUER: 'https://idp.example.com', WORKBENCH_OIDC_NAME: 'x'.repeat(61) }, /NAME/);
  });

  it('stops start-up when the policy turns off every sign-in method and no provider is configured', async () => {
    const config = { publicUrl: 'https://wb.example.com' } as GatewayConfig;
    const logger = createLogger({ level: 'silent', destination: 'silent' });
    const off = parsePolicy({ signIn: { apiKey: false, loginLinks: false } }, 'test');
    await assert.rejects(
      createPortalSignIn(config, off, {}, logger),
      (err: unknown) => isGatewayError(err) && /nobody could sign in/.test(err.message),
    );
    const onlyLinks = await createPortalSignIn(config, parsePolicy({ signIn: { apiKey: false } }, 'test'), {}, logger);
    assert.deepEqual(onlyLinks, { apiKey: false, loginLinks: true });
    const withSso = await createPortalSignIn(
      config,
      off,
      // discovery fails at once (nothing listens on port 9) and is only logged: start-up goes on
      { WORKBENCH_OIDC_ISSUER: 'http://127.0.0.1:9', WORKBENCH_OIDC_CLIENT_ID: 'id' },
      logger,
    );
    assert.equal(withSso.sso?.client.redirectUri, 'https://wb.example.com/login/sso/callback');
    assert.equal(withSso.sso?.client.displayName, '127.0.0.1');
  });
});
