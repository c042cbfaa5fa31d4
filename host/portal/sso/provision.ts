/**
 * @module host/portal/sso/provision
 * Which user a single sign-on signs in as, made or linked on the first sign-in:
 *
 * 1. the policy's rule admits the person (host/policy/sign-in.ts: email, verified, domain, claim);
 * 2. an identity already linked (same issuer and subject) signs in as its user;
 * 3. else the user with the same email: linked to this subject now, unless that user is linked to
 *    another subject at this issuer (an email address given to someone else: refused);
 * 4. else, where the rule creates accounts, a new user in the tenant the rule places them in.
 *
 * Steps 3 and 4 are one transaction; two first sign-ins at once (two tabs, two replicas) meet a
 * unique key, and the loser reads again what the winner wrote.
 */
import { isUniqueViolation, type Db } from '../../storage/db.js';
import { IdentityStore } from '../../storage/identities.js';
import { lockUserRow, UserStore, type User } from '../../storage/users.js';
import { decideSsoAccess, placeNewUser, type SsoRefusal } from '../../policy/sign-in.js';
import type { SsoRule } from '../../policy/schema.js';
import type { SsoIdentity } from './oidc-client.js';

export type SsoSubjectMismatch = { ok: false; code: 'GW_ERR_SSO_SUBJECT_MISMATCH'; reason: string };

export type SsoUserResult =
  | { ok: true; user: User; how: 'signed-in' | 'linked' | 'created'; tenantBy?: 'claim' | 'domain' | 'default' }
  | SsoRefusal
  | SsoSubjectMismatch;

/** The user `identity` signs in as, linking or creating it on the first sign-in; or why not. */
export async function resolveSsoUser(
  db: Db,
  rule: SsoRule,
  identity: SsoIdentity,
  now: number = Date.now(),
): Promise<SsoUserResult> {
  const access = decideSsoAccess(rule, identity.claims);
  if (!access.ok) return access;
  try {
    return await resolveOnce(db, rule, identity, access, now);
  } catch (err) {
    // another sign-in linked or created the same thing meanwhile: what it wrote decides
    if (isUniqueViolation(err)) return resolveOnce(db, rule, identity, access, now);
    throw err;
  }
}

type Access = Extract<ReturnType<typeof decideSsoAccess>, { ok: true }>;

async function resolveOnce(
  db: Db,
  rule: SsoRule,
  identity: SsoIdentity,
  access: Access,
  now: number,
): Promise<SsoUserResult> {
  const { issuer, subject } = identity;
  const identities = new IdentityStore(db);
  const linked = await identities.bySubject(issuer, subject);
  const linkedUser = linked && (await new UserStore(db).byId(linked.userId));
  if (linkedUser) {
    await identities.touch(issuer, subject, now);
    return { ok: true, user: linkedUser, how: 'signed-in' };
  }
  return db.transaction(async (tx): Promise<SsoUserResult> => {
    const users = new UserStore(tx);
    const txIdentities = new IdentityStore(tx);
    const existing = await users.byEmail(access.email);
    if (existing) {
      await lockUserRow(tx, existing.id);
      const other = await txIdentities.forUser(existing.id, issuer);
      if (other && other.subject !== subject)
        return {
          ok: false,
          code: 'GW_ERR_SSO_SUBJECT_MISMATCH',
          reason: `The Workbench account for ${access.email} belongs to another identity at this provider, so you were not signed in as it. If the address was given to you, ask the operator to move the account.`,
        };
      await txIdentities.link(issuer, subject, existing.id, access.email, now);
      return { ok: true, user: existing, how: 'linked' };
    }
    if (!access.mayCreate)
      return {
        ok: false,
        code: 'GW_ERR_SSO_NO_ACCOUNT',
        reason: `There is no Workbench account for ${access.email}, and this Workbench does not create accounts at sign-in. Ask the operator to create yours.`,
      };
    const place = placeNewUser(rule, identity.claims, access.domain);
    if (!place.ok) return place;
    const user = await users.create(access.email, place.tenant);
    await txIdentities.link(issuer, subject, user.id, access.email, now);
    return { ok: true, user, how: 'created', tenantBy: place.by };
  });
}
