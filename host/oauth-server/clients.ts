/**
 * @module host/oauth-server/clients
 * The clients this server knows, in the database so that every replica knows the same ones:
 * clients registered here (RFC 7591; a random client_id starting "wbc_", never "https://"), and
 * clients known by their metadata document (the client_id is its https URL; the row is the
 * document as last fetched, kept until its cache lifetime ends). Looking up a client whose
 * document has expired fetches it again; a document that can no longer be fetched, or no longer
 * checks, refuses the client (nothing invalid is cached).
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../storage/db.js';
import type { AddressBudget } from './address-budget.js';
import { clientIdUrlProblem, fetchClientDocument, isClientIdUrl, type ClientDocumentDeps } from './client-document.js';
import { checkClientMetadata, type ClientMetadata } from './client-metadata.js';
import { OAuthRefusal, refuse } from './oauth-error.js';

export const CLIENT_ID_PREFIX = 'wbc_';
/** a registered client last authorized this long ago, with no live grant, is forgotten (it registers again) */
export const REGISTERED_KEEP_MS = 90 * 86_400_000;

export interface OAuthClient {
  clientId: string;
  kind: 'dcr' | 'cimd';
  metadata: ClientMetadata;
  createdAt: number;
}

export interface ClientRegistryOptions extends ClientDocumentDeps {
  db: Db;
  now: () => number;
  /** registrations and document fetches per address (shared budget) */
  budget: AddressBudget;
  dynamicRegistration: boolean;
  clientIdMetadataDocuments: boolean;
}

interface ClientRow {
  client_id: string;
  kind: string;
  metadata: string;
  created_at: number;
  expires_at: number | null;
}

const toClient = (r: ClientRow): OAuthClient => ({
  clientId: r.client_id,
  kind: r.kind === 'cimd' ? 'cimd' : 'dcr',
  metadata: JSON.parse(r.metadata) as ClientMetadata,
  createdAt: Number(r.created_at),
});

/** The refusal of an address that has spent its budget: `retryAfterSec` says when it may try again. */
function budgetRefusal(retryAfterSec: number): OAuthRefusal {
  return new OAuthRefusal(
    'temporarily_unavailable',
    `Too many client registrations or client metadata fetches from this address; try again in ${retryAfterSec} s.`,
    retryAfterSec,
  );
}

export class ClientRegistry {
  readonly #o: ClientRegistryOptions;
  constructor(options: ClientRegistryOptions) {
    this.#o = options;
  }

  /** Dynamic Client Registration: checks the metadata and stores a new public client. */
  async register(body: unknown, address: string): Promise<OAuthClient> {
    if (!this.#o.dynamicRegistration)
      throw refuse('invalid_request', 'Dynamic client registration is turned off on this server.');
    const metadata = checkClientMetadata(body);
    const wait = this.#o.budget.take(address);
    if (wait !== undefined) throw budgetRefusal(wait);
    const client: OAuthClient = {
      clientId: CLIENT_ID_PREFIX + randomBytes(18).toString('base64url'),
      kind: 'dcr',
      metadata,
      createdAt: this.#o.now(),
    };
    await this.#o.db.run(
      'INSERT INTO oauth_clients (client_id, kind, client_name, metadata, created_at, expires_at) VALUES (?, ?, ?, ?, ?, NULL)',
      [client.clientId, 'dcr', metadata.client_name ?? null, JSON.stringify(metadata), client.createdAt],
    );
    return client;
  }

  /**
   * The client of a client_id: a registered one, or one known by its metadata document (fetched
   * when not cached). Throws OAuthRefusal invalid_client when there is no such client, saying why.
   */
  async find(clientId: string, address: string): Promise<OAuthClient> {
    if (clientId.length === 0) throw refuse('invalid_client', 'The request names no client_id.');
    if (isClientIdUrl(clientId)) return this.#byDocument(clientId, address);
    const row = await this.#o.db.get<ClientRow>("SELECT * FROM oauth_clients WHERE client_id = ? AND kind = 'dcr'", [
      clientId,
    ]);
    if (!row)
      throw refuse(
        'invalid_client',
        'This server does not know that client_id: the app must register again (or it was registered with another server).',
      );
    return toClient(row);
  }

  /** Whether a client_id names a registered client, or a client_id URL (whose code or grant is the proof). */
  async exists(clientId: string): Promise<boolean> {
    if (isClientIdUrl(clientId)) return this.#o.clientIdMetadataDocuments;
    return (await this.#o.db.get('SELECT client_id FROM oauth_clients WHERE client_id = ?', [clientId])) !== undefined;
  }

  /** Records that a client was authorized (a registered client never used is swept after a day). */
  async touch(clientId: string): Promise<void> {
    await this.#o.db.run('UPDATE oauth_clients SET last_used_at = ? WHERE client_id = ?', [this.#o.now(), clientId]);
  }

  async #byDocument(clientId: string, address: string): Promise<OAuthClient> {
    if (!this.#o.clientIdMetadataDocuments)
      throw refuse('invalid_client', 'This server does not accept client ID metadata documents (URL client_ids).');
    const problem = clientIdUrlProblem(clientId);
    if (problem) throw refuse('invalid_client', `The client_id is not a valid client ID URL: ${problem}.`);
    const now = this.#o.now();
    const cached = await this.#o.db.get<ClientRow>(
      "SELECT * FROM oauth_clients WHERE client_id = ? AND kind = 'cimd' AND expires_at > ?",
      [clientId, now],
    );
    if (cached) return toClient(cached);
    const wait = this.#o.budget.take(address);
    if (wait !== undefined) throw budgetRefusal(wait);
    const { metadata, cacheSec } = await fetchClientDocument(clientId, this.#o);
    // replicas fetching at once write the same document: the last one stays
    await this.#o.db.run(
      `INSERT INTO oauth_clients (client_id, kind, client_name, metadata, created_at, expires_at) VALUES (?, 'cimd', ?, ?, ?, ?)
       ON CONFLICT (client_id) DO UPDATE SET client_name = excluded.client_name, metadata = excluded.metadata, expires_at = excluded.expires_at`,
      [clientId, metadata.client_name ?? null, JSON.stringify(metadata), now, now + cacheSec * 1000],
    );
    return { clientId, kind: 'cimd', metadata, createdAt: now };
  }

  /**
   * Deletes registered clients never authorized within a day, or unused for REGISTERED_KEEP_MS and
   * with no live grant, and documents expired a day ago.
   */
  async sweep(): Promise<void> {
    const now = this.#o.now();
    await this.#o.db.run("DELETE FROM oauth_clients WHERE kind = 'dcr' AND last_used_at IS NULL AND created_at < ?", [
      now - 86_400_000,
    ]);
    await this.#o.db.run(
      `DELETE FROM oauth_clients WHERE kind = 'dcr' AND last_used_at < ? AND NOT EXISTS
         (SELECT 1 FROM oauth_grants g WHERE g.client_id = oauth_clients.client_id AND g.revoked_at IS NULL AND g.expires_at > ?)`,
      [now - REGISTERED_KEEP_MS, now],
    );
    await this.#o.db.run("DELETE FROM oauth_clients WHERE kind = 'cimd' AND expires_at < ?", [now - 86_400_000]);
  }
}
