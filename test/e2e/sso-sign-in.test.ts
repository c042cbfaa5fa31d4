/**
 * @module test/e2e/sso-sign-in.test
 * Single sign-on to the portal in headless Chromium, against a real OpenID Connect provider
 * (oidc-provider on loopback): the sign-in page offers only what the policy turns on (API keys off
 * here: the form is gone and its route refuses); a first sign-in makes the user, placed in a tenant
 * by its email domain or by a claim; the policy refuses an address outside its domains, a person
 * without the required claim and an unverified email, each on a page with its code and nobody made;
 * an operator's existing user signs in as themself (the subject linked), and another identity with
 * the same email is refused; a cancel at the provider and a forged callback are refused too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  CHROMIUM,
  LAUNCH_ARGS,
  chromiumSkip,
  ssoSignIn,
  startSsoGateway,
  type SsoGateway,
} from '../helpers/sso-gateway.js';

describe(
  'single sign-on to the portal (headless Chromium, a real OpenID Connect provider)',
  { skip: chromiumSkip },
  () => {
    let sso: SsoGateway;
    let browser: Browser;

    before(async () => {
      sso = await startSsoGateway({
        signIn: {
          apiKey: false,
          loginLinks: false,
          sso: {
            allowedDomains: ['acme.test', 'beta.test'],
            requiredClaim: { claim: 'groups', value: 'workbench' },
            tenantClaim: 'wb_tenant',
            tenantByDomain: { 'acme.test': 'acme', 'beta.test': 'beta' },
          },
        },
      });
      const people: [string, Record<string, unknown>][] = [
        ['ada', { email: 'ada@acme.test', email_verified: true, groups: ['workbench', 'eng'] }],
        ['bea', { email: 'Bea@Beta.test', email_verified: true, groups: ['workbench'], wb_tenant: 'research' }],
        ['cy', { email: 'cy@elsewhere.test', email_verified: true, groups: ['workbench'] }],
        ['dee', { email: 'dee@acme.test', email_verified: true, groups: ['sales'] }],
        ['eve', { email: 'eve@acme.test', email_verified: false, groups: ['workbench'] }],
        ['fay', { email: 'fay@acme.test', email_verified: true, groups: ['workbench'] }],
        ['fay-again', { email: 'fay@acme.test', email_verified: true, groups: ['workbench'] }],
      ];
      for (const [sub, claims] of people) sso.idp.accounts.set(sub, claims);
      browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
    });

    after(async () => {
      await browser?.close().catch(() => undefined);
      await sso?.close();
    });

    /** A fresh browser (no session here, none at the provider) on the sign-in page, `next` given. */
    async function atSignIn(next = '/integrations'): Promise<Page> {
      const page = await (await browser.newContext()).newPage();
      await page.goto(`${sso.url}/login?next=${encodeURIComponent(next)}`);
      return page;
    }

    /** Signs in as `account` from the sign-in page: the callback's status, and the text of the page after. */
    async function signInAs(account: string, next?: string): Promise<{ page: Page; status: number; text: string }> {
      const page = await atSignIn(next);
      await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
      await page.waitForURL((u) => u.origin === sso.idp.issuer);
      const status = await ssoSignIn(page, account);
      await page.waitForLoadState();
      return { page, status, text: (await page.locator('body').textContent()) ?? '' };
    }

    const users = async () =>
      (
        await sso.gateway.db.all<{ email: string; tenant: string }>('SELECT email, tenant FROM users ORDER BY email')
      ).map((u) => `${u.email}:${u.tenant}`);

    it('offers single sign-on only: the API-key form is gone, and its route and sign-in links refuse', async () => {
      const page = await atSignIn();
      assert.equal(await page.getByRole('link', { name: 'Sign in with Test IdP' }).count(), 1);
      assert.equal(await page.getByLabel('Your Workbench API key').count(), 0);
      assert.doesNotMatch((await page.locator('main').textContent()) ?? '', /sign-in link/);
      await page.context().close();
      for (const [method, path] of [
        ['POST', '/login'],
        ['GET', '/login/link/aaaaaaaaaaaaaaaaaaaaaaaa'],
        ['POST', '/login/link/aaaaaaaaaaaaaaaaaaaaaaaa'],
      ] as const) {
        const res = await fetch(`${sso.url}${path}`, {
          method,
          redirect: 'manual',
          ...(method === 'POST'
            ? {
                headers: { 'content-type': 'application/x-www-form-urlencoded', origin: sso.url },
                body: 'apiKey=wb_x&_csrf=x',
              }
            : {}),
        });
        assert.equal(res.status, 403, `${method} ${path}`);
        assert.match(await res.text(), /turned off[\s\S]*GW_ERR_PORTAL_SIGN_IN_DISABLED/, `${method} ${path}`);
      }
    });

    it('signs a new person in end to end, makes their user in the tenant of their domain, and brings them to the page they asked for', async () => {
      const before = await users();
      const { page, status, text } = await signInAs('ada', '/activity');
      assert.equal(status, 303);
      assert.equal(new URL(page.url()).pathname, '/activity');
      assert.match(text, /Signed in as ada@acme\.test/);
      assert.deepEqual(await users(), [...before, 'ada@acme.test:acme'].sort());
      const linked = await sso.gateway.db.get<{ subject: string; issuer: string }>(
        'SELECT i.subject, i.issuer FROM user_identities i JOIN users u ON u.id = i.user_id WHERE u.email = ?',
        ['ada@acme.test'],
      );
      assert.deepEqual(linked, { subject: 'ada', issuer: sso.idp.issuer });
      const session = await sso.gateway.db.get<{ sign_in_method: string; key_id: string | null }>(
        "SELECT s.sign_in_method, s.key_id FROM portal_sessions s JOIN users u ON u.id = s.user_id WHERE u.email = 'ada@acme.test'",
      );
      assert.deepEqual(session, { sign_in_method: 'sso', key_id: null });
      // a key made in this session says where it came from
      await page.goto(`${sso.url}/keys`);
      await page.getByLabel('Label').fill('laptop agent');
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.waitForURL(`${sso.url}/keys`);
      assert.match(
        (await page.locator('main').textContent()) ?? '',
        /laptop agent.*Created in a single sign-on session/s,
      );
      await page.context().close();

      // a second sign-in (another browser) is the same user: nobody new
      const again = await signInAs('ada');
      assert.match(again.text, /Signed in as ada@acme\.test/);
      assert.equal((await users()).filter((u) => u.startsWith('ada@')).length, 1);
      await again.page.context().close();
    });

    it('places a new user by the tenant claim before the domain', async () => {
      const { page, status, text } = await signInAs('bea');
      assert.equal(status, 303);
      assert.match(text, /Signed in as bea@beta\.test/);
      assert.ok((await users()).includes('bea@beta.test:research'));
      await page.context().close();
    });

    it('refuses an address outside the allowed domains, a person without the required claim and an unverified email: a page with the code, nobody made, not signed in', async () => {
      const cases: [string, RegExp, string][] = [
        ['cy', /elsewhere\.test may not sign in/, 'GW_ERR_SSO_DOMAIN_NOT_ALLOWED'],
        ['dee', /lacks what this Workbench requires/, 'GW_ERR_SSO_CLAIM_REQUIRED'],
        ['eve', /does not say that eve@acme\.test is verified/, 'GW_ERR_SSO_EMAIL_UNVERIFIED'],
      ];
      const before = await users();
      for (const [account, why, code] of cases) {
        const { page, status, text } = await signInAs(account);
        assert.equal(status, 403, account);
        assert.match(text, why, account);
        assert.match(text, new RegExp(code), account);
        assert.doesNotMatch(text, /Signed in as/, account);
        await page.goto(`${sso.url}/integrations`);
        assert.match(new URL(page.url()).pathname, /^\/login$/, `${account} is not signed in`);
        await page.context().close();
      }
      assert.deepEqual(await users(), before);
    });

    it("links an operator's existing user on their first sign-in, and refuses another identity with the same email", async () => {
      const fay = await sso.gateway.users.create('fay@acme.test', 'ops');
      const first = await signInAs('fay');
      assert.equal(first.status, 303);
      assert.match(first.text, /Signed in as fay@acme\.test/);
      assert.ok((await users()).includes('fay@acme.test:ops'), 'the tenant the operator chose stays');
      const link = await sso.gateway.db.get<{ subject: string }>(
        'SELECT subject FROM user_identities WHERE user_id = ?',
        [fay.id],
      );
      assert.equal(link?.subject, 'fay');
      await first.page.context().close();

      const impostor = await signInAs('fay-again');
      assert.equal(impostor.status, 403);
      assert.match(impostor.text, /belongs to another identity/);
      assert.match(impostor.text, /GW_ERR_SSO_SUBJECT_MISMATCH/);
      assert.doesNotMatch(impostor.text, /Signed in as/);
      await impostor.page.context().close();
    });

    it('refuses a sign-in cancelled at the provider, and a callback this browser did not start', async () => {
      const page = await atSignIn();
      await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
      await page.waitForURL((u) => u.origin === sso.idp.issuer);
      const callback = page.waitForResponse((r) => r.url().includes('/login/sso/callback'));
      await page.getByRole('button', { name: 'Cancel' }).click();
      assert.equal((await callback).status(), 403);
      assert.match(
        (await page.locator('main').textContent()) ?? '',
        /cancelled or refused[\s\S]*GW_ERR_SSO_PROVIDER_REFUSED/,
      );
      await page.context().close();

      // someone else's code and state, sent to this browser (login CSRF): no sign-in of ours to match
      const forged = await fetch(`${sso.url}/login/sso/callback?code=someone-elses&state=someone-elses`, {
        redirect: 'manual',
      });
      assert.equal(forged.status, 400);
      assert.match(await forged.text(), /GW_ERR_SSO_RESPONSE_INVALID/);
      assert.equal(forged.headers.get('set-cookie')?.includes('wb_session='), false);
    });
  },
);
