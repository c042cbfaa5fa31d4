/**
 * @module host/storage/db
 * The storage interface every repository is written against. SQL uses `?` placeholders and a
 * portable subset (TEXT, INTEGER, BIGINT, no engine-specific functions), so the SQLite default and
 * PostgreSQL implement the same interface.
 */
export type SqlValue = string | number | bigint | null;

/** Whether DATABASE_URL selects PostgreSQL (a database several servers may share) rather than a SQLite file. */
export function isPostgresUrl(databaseUrl: string | undefined): boolean {
  return databaseUrl !== undefined && /^postgres(ql)?:\/\//i.test(databaseUrl);
}

/** True for a write refused because a row with the same unique key exists (SQLite or PostgreSQL). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

export interface Db {
  readonly kind: 'sqlite' | 'postgres';
  all<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
  get<T>(sql: string, params?: readonly SqlValue[]): Promise<T | undefined>;
  run(sql: string, params?: readonly SqlValue[]): Promise<{ changes: number }>;
  /** Runs `fn` in one transaction; all statements inside must go through the `tx` handle. */
  transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
