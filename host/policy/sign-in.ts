/**
 * @module host/policy/sign-in
 * Who single sign-on admits, and where a new user goes. Pure: `(rule, claims) → decision`, each
 * refusal with its catalogue code and a sentence for the person. The claims are the ID token's
 * (validated by openid-client) with the UserInfo answer filling what the token left out.
 *
 * The order of the checks is the order of the refusals a person meets: an email at all, a verified
 * one, its domain, the required claim. Then, for someone who has no account yet, whether the policy
 * creates accounts (only when allowedDomains or requiredClaim says who may have one: with neither,
 * any verified address at the provider could make one), and the tenant: the tenant claim, then the
 * domain's tenant, then defaultTenant.
 */
import { validateTenant } from '../storage/users.js';
import type { SsoRule } from './schema.js';

/** What the provider says about the person: the ID token's claims, then UserInfo's. */
export type SsoClaims = Readonly<Record<string, unknown>>;

export type SsoRefusalCode =
  | 'GW_ERR_SSO_EMAIL_MISSING'
  | 'GW_ERR_SSO_EMAIL_UNVERIFIED'
  | 'GW_ERR_SSO_DOMAIN_NOT_ALLOWED'
  | 'GW_ERR_SSO_CLAIM_REQUIRED'
  | 'GW_ERR_SSO_NO_ACCOUNT'
  | 'GW_ERR_SSO_NO_TENANT';

export interface SsoRefusal {
  ok: false;
  code: SsoRefusalCode;
  /** a sentence for the person (names the rule, never another person's data) */
  reason: string;
}

export type SsoAccess = { ok: true; email: string; domain: string; mayCreate: boolean } | SsoRefusal;

export type SsoPlacement = { ok: true; tenant: string; by: 'claim' | 'domain' | 'default' } | SsoRefusal;

const EMAIL = /^[^\s@<>"']{1,64}@([^\s@<>"']{1,255})$/;

const refuse = (code: SsoRefusalCode, reason: string): SsoRefusal => ({ ok: false, code, reason });

/** Whether `rule` creates users on a first sign-in: only when it says who may have an account. */
export function createsAccounts(rule: SsoRule): boolean {
  return rule.allowedDomains.length > 0 || rule.requiredClaim !== undefined;
}

/** Whether someone with these claims may sign in (as an existing user, or as a new one when `mayCreate`). */
export function decideSsoAccess(rule: SsoRule, claims: SsoClaims): SsoAccess {
  const raw = claims['email'];
  const email = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
  const match = EMAIL.exec(email);
  if (!match)
    return refuse(
      'GW_ERR_SSO_EMAIL_MISSING',
      'The identity provider did not send an email address for you, and Workbench needs one to know who you are. Ask your administrator to release the email claim to Workbench.',
    );
  // email_verified may come as the string "true" from some providers; anything else is not verified
  const verified = claims['email_verified'] === true || claims['email_verified'] === 'true';
  if (rule.requireVerifiedEmail && !verified)
    return refuse(
      'GW_ERR_SSO_EMAIL_UNVERIFIED',
      `The identity provider does not say that ${email} is verified. Verify the address with your provider, then sign in again.`,
    );
  const domain = (match[1] ?? '').toLowerCase();
  if (rule.allowedDomains.length > 0 && !rule.allowedDomains.includes(domain))
    return refuse(
      'GW_ERR_SSO_DOMAIN_NOT_ALLOWED',
      `Addresses at ${domain} may not sign in to this Workbench. Sign in with your work account, or ask the operator to allow the domain.`,
    );
  const required = rule.requiredClaim;
  if (required && !claimHas(claims[required.claim], required.value))
    return refuse(
      'GW_ERR_SSO_CLAIM_REQUIRED',
      `Your account at the identity provider lacks what this Workbench requires (the claim "${required.claim}"). Ask your administrator for access.`,
    );
  return { ok: true, email, domain, mayCreate: createsAccounts(rule) };
}

/**
 * Whether a claim's value holds one of `wanted`: a string equal to one, a list containing one, a
 * boolean or number whose text is one. Anything else (an object, missing) holds nothing.
 */
export function claimHas(value: unknown, wanted: string | readonly string[]): boolean {
  const want = typeof wanted === 'string' ? [wanted] : wanted;
  const one = (v: unknown): boolean =>
    (typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number') && want.includes(String(v));
  return Array.isArray(value) ? value.some(one) : one(value);
}

/** The tenant of a new user: the tenant claim, then the domain's tenant, then the default. */
export function placeNewUser(rule: SsoRule, claims: SsoClaims, domain: string): SsoPlacement {
  if (rule.tenantClaim !== undefined) {
    const v = claims[rule.tenantClaim];
    if (typeof v === 'string' && v !== '') {
      const tenant = v.trim().toLowerCase();
      if (validateTenant(tenant) === undefined) return { ok: true, tenant, by: 'claim' };
      return refuse(
        'GW_ERR_SSO_NO_TENANT',
        `The identity provider's "${rule.tenantClaim}" claim is no tenant name Workbench accepts, so no account was made. Ask your administrator to correct it.`,
      );
    }
  }
  const byDomain = Object.hasOwn(rule.tenantByDomain, domain) ? rule.tenantByDomain[domain] : undefined;
  if (byDomain !== undefined) return { ok: true, tenant: byDomain, by: 'domain' };
  if (rule.defaultTenant !== undefined) return { ok: true, tenant: rule.defaultTenant, by: 'default' };
  return refuse(
    'GW_ERR_SSO_NO_TENANT',
    'Workbench could not tell which team your account belongs to, so no account was made. Ask the operator to place your domain in a tenant.',
  );
}
