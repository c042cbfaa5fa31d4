/**
 * @module host/wiring/storage
 * The gateway's first step: the database, its users and the vault that seals connections, opened
 * only after the shared-key check (a replica must not generate a key of its own), with a word at
 * start about connections a key rotation left behind.
 */
import type { GatewayConfig } from '../config.js';
import { loadVaultWithPending } from '../connections/key-files.js';
import { keyUsage, keyUsageWarnings } from '../connections/key-rotation.js';
import { requireSharedKey, type Vault } from '../connections/vault.js';
import type { Db } from '../storage/db.js';
import { openDatabase } from '../storage/open.js';
import { UserStore } from '../storage/users.js';
import type { Logger } from '../telemetry/logger.js';

export interface Storage {
  db: Db;
  users: UserStore;
  vault: Vault;
}

export async function openStorage(config: GatewayConfig, env: NodeJS.ProcessEnv, logger: Logger): Promise<Storage> {
  // before anything is opened or created: a replica must not generate a key of its own
  requireSharedKey(config.databaseUrl, config.dataDir, env);
  const db = await openDatabase(config.databaseUrl, config.dataDir);
  const users = new UserStore(db, { log: logger });
  const vault = loadVaultWithPending({
    dataDir: config.dataDir,
    env,
    onWarning: (message) => logger.warn({}, message),
  });
  // connections a rotation left on an older key (a replica sealed them meanwhile), or on a key this
  // server lacks, or a server started with the key from before the last rotation: say so at start,
  // while the older key can still be kept or restored
  const usage = await keyUsage(db, vault);
  for (const message of keyUsageWarnings(usage, vault))
    logger.warn(
      { keyId: vault.keyId, rotatedTo: usage.rotatedTo?.keyId, older: usage.older, unknown: usage.unknown },
      message,
    );
  return { db, users, vault };
}
