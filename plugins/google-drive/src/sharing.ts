/**
 * @module plugins/google-drive/src/sharing
 * Who has access to a file, and giving someone access: the argument combinations Drive would
 * refuse (an email for a domain, a notification to anyone with the link, …) are refused first.
 */
import { changes, defineTool, reads, z } from 'workbench/plugin-sdk';
import { ALL_DRIVES, api, fileIdOf, fileOrFolder, filePath } from './api.js';
import { slimPermission, type Permission } from './shape.js';

const PERMISSION_FIELDS = 'id,type,role,emailAddress,domain,displayName,expirationTime,deleted,allowFileDiscovery';

const shareInput = z.object({
  ...fileOrFolder,
  type: z
    .enum(['user', 'group', 'domain', 'anyone'])
    .describe('Who gets access: one person, a Google group, a whole domain, or anyone with the link.'),
  role: z.enum(['reader', 'commenter', 'writer']).describe('reader (view), commenter, or writer (edit).'),
  emailAddress: z
    .string()
    .regex(/^[^@\s]{1,64}@[^@\s]{1,255}$/)
    .optional()
    .describe("The person's or group's email (type user or group)."),
  domain: z
    .string()
    .regex(/^[A-Za-z0-9.-]{1,253}$/)
    .optional()
    .describe('The domain, e.g. example.com (type domain).'),
  allowFileDiscovery: z
    .boolean()
    .optional()
    .describe('For domain or anyone: whether the file can be found by search (false: only with the link).'),
  sendNotificationEmail: z
    .boolean()
    .optional()
    .describe('For user or group: send the notification email (default true).'),
  emailMessage: z.string().max(2000).optional().describe('A note added to the notification email.'),
});

/** Refuses what Drive would refuse for this type of grantee; answers whether a notification email goes out (undefined: not for this type). */
function checkShare(a: z.output<typeof shareInput>): boolean | undefined {
  const personal = a.type === 'user' || a.type === 'group';
  if (personal && !a.emailAddress) throw new Error(`Sharing with a ${a.type} needs emailAddress.`);
  if (!personal && a.emailAddress) throw new Error(`emailAddress is only for type user or group, not ${a.type}.`);
  if (a.type === 'domain' && !a.domain) throw new Error('Sharing with a domain needs domain, e.g. "example.com".');
  if (a.type !== 'domain' && a.domain) throw new Error('domain is only for type domain.');
  if (personal && a.allowFileDiscovery !== undefined)
    throw new Error('allowFileDiscovery is only for type domain or anyone.');
  if (!personal && (a.emailMessage || a.sendNotificationEmail === true))
    throw new Error('Notification emails go only to a user or a group.');
  const notify = personal ? a.sendNotificationEmail !== false : undefined;
  if (a.emailMessage && notify === false) throw new Error('emailMessage needs sendNotificationEmail to be true.');
  return notify;
}

export const shareFile = defineTool({
  description:
    'Share a Google Drive file or folder: give a person (user) or a Google group, by email, or everyone in a domain, or anyone with the link, the role reader (view), commenter or writer (edit). People and groups get a notification email unless sendNotificationEmail is false, optionally with emailMessage. Returns the permission created; drive_list_permissions shows the current ones.',
  input: shareInput,
  annotations: changes('Share file'),
  handler: async (ctx, a) => {
    const id = fileIdOf(a.fileId);
    const notify = checkShare(a);
    const permission = {
      type: a.type,
      role: a.role,
      emailAddress: a.emailAddress || undefined,
      domain: a.domain || undefined,
      allowFileDiscovery: a.allowFileDiscovery,
    };
    const p = await api.json<Permission>(ctx, 'POST', filePath(id, '/permissions'), {
      query: {
        ...ALL_DRIVES,
        sendNotificationEmail: notify === undefined ? undefined : String(notify),
        emailMessage: a.emailMessage,
        fields: PERMISSION_FIELDS,
      },
      body: permission,
      action: `share file ${id} with ${a.emailAddress || a.domain || 'anyone with the link'}`,
    });
    return { fileId: id, permission: slimPermission(p), notified: notify === true };
  },
});

export const listPermissions = defineTool({
  description:
    'List who has access to a Google Drive file or folder, who can view, comment on or edit it (its sharing settings and permissions): each person, group, domain or link-sharing entry with its role (owner, writer, commenter, reader) and permission id. When `next` is not null, pass it as `cursor`. Use drive_share_file to give someone access.',
  input: z.object({
    ...fileOrFolder,
    cursor: z.string().min(1).max(2000).optional().describe('The `next` value of the previous page.'),
  }),
  annotations: reads('List file permissions'),
  handler: async (ctx, a) => {
    const id = fileIdOf(a.fileId);
    const data = await api.json<{ permissions?: Permission[]; nextPageToken?: string }>(
      ctx,
      'GET',
      filePath(id, '/permissions'),
      {
        query: {
          ...ALL_DRIVES,
          pageSize: 100,
          pageToken: a.cursor,
          fields: `nextPageToken,permissions(${PERMISSION_FIELDS})`,
        },
        action: `list who has access to file ${id}`,
      },
    );
    const permissions = Array.isArray(data.permissions) ? data.permissions.map(slimPermission) : [];
    return { fileId: id, permissions, next: data.nextPageToken || null };
  },
});
