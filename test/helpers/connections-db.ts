/**
 * @module test/helpers/connections-db
 * Shared set-up for connection tests: a migrated SQLite file in a temp dir, a user, and manifests
 * for an OAuth2 plugin (pointing at a mock provider) and an API-key plugin.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { manifestSchema, type PluginManifest } from '../../contracts/manifest.js';
import type { Db } from '../../host/storage/db.js';
import { migrate } from '../../host/storage/migrations.js';
import { openSqlite } from '../../host/storage/sqlite.js';
import { UserStore, type User } from '../../host/storage/users.js';

export interface TestDb {
  db: Db;
  dir: string;
  file: string;
  users: UserStore;
  user: User;
  close(): Promise<void>;
}

export async function openTestDb(): Promise<TestDb> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wb-conn-'));
  const file = path.join(dir, 'workbench.db');
  const db = openSqlite(file);
  await migrate(db);
  const users = new UserStore(db);
  const user = await users.create('ada@example.com', 'acme');
  return {
    db,
    dir,
    file,
    users,
    user,
    close: async () => {
      await db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function oauthManifest(
  provider: { authorizeUrl: string; tokenUrl: string; revokeUrl?: string },
  extra: Record<string, unknown> = {},
): PluginManifest {
  return manifestSchema.parse({
    name: 'mockhub',
    version: '1.0.0',
    displayName: 'MockHub',
    description: 'A test OAuth2 integration',
    auth: {
      type: 'oauth2',
      authorizationUrl: provider.authorizeUrl,
      tokenUrl: provider.tokenUrl,
      ...(provider.revokeUrl ? { revocationUrl: provider.revokeUrl } : {}),
      scopes: ['repo', 'read:user'],
      ...extra,
    },
    egress: ['api.mockhub.test'],
    tools: [{ name: 'mockhub_whoami', description: 'Who am I', inputSchema: { type: 'object', properties: {} } }],
  });
}

export function apiKeyManifest(): PluginManifest {
  return manifestSchema.parse({
    name: 'keyed',
    version: '1.0.0',
    displayName: 'Keyed Service',
    description: 'A test API-key integration',
    auth: {
      type: 'apikey',
      fields: [
        { name: 'apiKey', label: 'API key', secret: true, pattern: 'k_[A-Za-z0-9]{8,}' },
        { name: 'region', label: 'Region', enum: ['us', 'eu'], default: 'us' },
        { name: 'accountId', label: 'Account ID', required: false, pattern: '[0-9]+' },
      ],
      inject: { header: 'x-api-key', format: '{apiKey}' },
    },
    egress: ['api.keyed.test'],
    tools: [{ name: 'keyed_ping', description: 'Ping', inputSchema: { type: 'object', properties: {} } }],
  });
}
