/**
 * @module plugins/google-drive/src/shape
 * Drive's files and permissions as the slim rows the tools return.
 */

type Person = { displayName?: string; emailAddress?: string };

/** The fields of a Drive file that the tools read (each call asks for its own `fields`). */
export type DriveFile = { id: string; parents?: string[]; owners?: Person[]; lastModifyingUser?: Person } & Partial<
  Record<'trashed' | 'starred' | 'shared', boolean>
> &
  Partial<
    Record<
      'name' | 'mimeType' | 'description' | 'size' | 'createdTime' | 'modifiedTime' | 'driveId' | 'webViewLink',
      string
    >
  > & {
    shortcutDetails?: { targetId?: string; targetMimeType?: string };
    capabilities?: Record<string, boolean>;
  };

export type Permission = {
  id: string;
  type: string;
  role: string;
  deleted?: boolean;
  allowFileDiscovery?: boolean;
} & Partial<Record<'emailAddress' | 'domain' | 'displayName' | 'expirationTime', string>>;

export const person = (u: Person | null | undefined): string | null =>
  u && typeof u === 'object' ? u.emailAddress || u.displayName || null : null;

/** A number Drive sends as a string (size), or null. */
export const num = (v: string | number | null | undefined): number | null =>
  v === undefined || v === null || v === '' || !Number.isFinite(Number(v)) ? null : Number(v);

export function slimFile(f: DriveFile) {
  return {
    id: f.id,
    name: f.name ?? null,
    mimeType: f.mimeType ?? null,
    modifiedTime: f.modifiedTime ?? null,
    size: num(f.size),
    parents: Array.isArray(f.parents) ? f.parents : [],
    owners: Array.isArray(f.owners) ? f.owners.map(person).filter(Boolean) : [],
    driveId: f.driveId ?? null,
    webViewLink: f.webViewLink ?? null,
    ...(f.trashed ? { trashed: true } : {}),
  };
}

export function slimPermission(p: Permission) {
  return {
    id: p.id,
    type: p.type,
    role: p.role,
    emailAddress: p.emailAddress ?? null,
    domain: p.domain ?? null,
    displayName: p.displayName ?? null,
    expirationTime: p.expirationTime ?? null,
    ...(p.allowFileDiscovery !== undefined ? { allowFileDiscovery: !!p.allowFileDiscovery } : {}),
    ...(p.deleted ? { deleted: true } : {}),
  };
}
