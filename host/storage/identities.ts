/**
 * @module host/storage/identities
 * Identities at an OpenID Connect provider linked to users (migration 17): the provider's issuer
 * and subject (`iss`, `sub`), the user, the email the identity had when it was linked. The subject
 * is what identifies a person at a provider; an email can be given to someone else, so once a user
 * is linked, only that subject signs in as them (the table's key and its UNIQUE (user_id, issuer)).
 */
import type { Db } from './db.js';

export interface LinkedIdentity {
  issuer: string;
  subject: string;
  userId: string;
  /** the email the identity had when it was linked */
  email: string;
  createdAt: number;
  lastSignInAt: number;
}

interface Row {
  issuer: string;
  subject: string;
  user_id: string;
  email: string;
  created_at: number;
  last_sign_in_at: number;
}

const toIdentity = (r: Row): LinkedIdentity => ({
  issuer: r.issuer,
  subject: r.subject,
  userId: r.user_id,
  email: r.email,
  createdAt: Number(r.created_at),
  lastSignInAt: Number(r.last_sign_in_at),
});

export class IdentityStore {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  /** The identity `subject` of `issuer`, if it was linked to a user. */
  async bySubject(issuer: string, subject: string): Promise<LinkedIdentity | undefined> {
    const r = await this.#db.get<Row>('SELECT * FROM user_identities WHERE issuer = ? AND subject = ?', [
      issuer,
      subject,
    ]);
    return r && toIdentity(r);
  }

  /** The identity at `issuer` that `userId` is linked to, if any. */
  async forUser(userId: string, issuer: string): Promise<LinkedIdentity | undefined> {
    const r = await this.#db.get<Row>('SELECT * FROM user_identities WHERE user_id = ? AND issuer = ?', [
      userId,
      issuer,
    ]);
    return r && toIdentity(r);
  }

  /** Links `subject` of `issuer` to a user (a unique violation when either side is linked already). */
  async link(issuer: string, subject: string, userId: string, email: string, now: number): Promise<void> {
    await this.#db.run(
      'INSERT INTO user_identities (issuer, subject, user_id, email, created_at, last_sign_in_at) VALUES (?, ?, ?, ?, ?, ?)',
      [issuer, subject, userId, email, now, now],
    );
  }

  async touch(issuer: string, subject: string, now: number): Promise<void> {
    await this.#db.run('UPDATE user_identities SET last_sign_in_at = ? WHERE issuer = ? AND subject = ?', [
      now,
      issuer,
      subject,
    ]);
  }
}
