/**
 * @module plugins/asana/src/shape
 * Asana's objects, as far as the tools read them; the `opt_fields` that ask only for what a
 * result shows; and the slim results the tools return.
 */

type Named = { gid?: string; name?: string } | null | undefined;
export interface RawTask {
  gid: string;
  name?: string;
  resource_subtype?: string;
  completed?: boolean;
  completed_at?: string;
  assignee?: { gid: string; name?: string; email?: string } | null;
  due_on?: string;
  due_at?: string;
  start_on?: string;
  notes?: string;
  created_at?: string;
  modified_at?: string;
  created_by?: Named;
  memberships?: Array<{ project?: { gid: string; name?: string }; section?: { gid: string; name?: string } } | null>;
  parent?: Named;
  tags?: Named[];
  custom_fields?: Array<{ gid?: string; name?: unknown; display_value?: string | null } | null>;
  num_subtasks?: number;
  workspace?: Named;
  permalink_url?: string;
}
export interface RawProject {
  gid: string;
  name?: string;
  archived?: boolean;
  completed?: boolean;
  notes?: string;
  owner?: Named;
  team?: Named;
  workspace?: Named;
  start_on?: string;
  due_on?: string;
  created_at?: string;
  modified_at?: string;
  privacy_setting?: string;
  current_status_update?: { title?: string; status_type?: string } | null;
  permalink_url?: string;
}
export interface RawStory {
  gid: string;
  type?: string;
  text?: string;
  created_at?: string;
  created_by?: Named;
}

export const TASK_ROW_FIELDS = ['name', 'completed', 'assignee.name', 'due_on', 'due_at', 'permalink_url'];
export const TASK_DETAIL_FIELDS = [
  'name',
  'resource_subtype',
  'completed',
  'completed_at',
  'assignee.name',
  'assignee.email',
  'due_on',
  'due_at',
  'start_on',
  'notes',
  'created_at',
  'modified_at',
  'created_by.name',
  'memberships.project.name',
  'memberships.section.name',
  'parent.name',
  'tags.name',
  'custom_fields.name',
  'custom_fields.display_value',
  'num_subtasks',
  'workspace.name',
  'permalink_url',
];
export const PROJECT_ROW_FIELDS = ['name', 'archived', 'owner.name', 'team.name', 'due_on', 'permalink_url'];
export const PROJECT_DETAIL_FIELDS = [
  'name',
  'archived',
  'completed',
  'notes',
  'owner.name',
  'team.name',
  'workspace.name',
  'start_on',
  'due_on',
  'created_at',
  'modified_at',
  'privacy_setting',
  'current_status_update.title',
  'current_status_update.status_type',
  'permalink_url',
];
export const STORY_FIELDS = ['type', 'text', 'created_at', 'created_by.name'];
const MAX_TEXT = 20000;

export const nameOf = (x: Named): string | null => (x && typeof x === 'object' ? (x.name ?? null) : null);
export const ref = (x: Named) => (x && typeof x === 'object' && x.gid ? { gid: x.gid, name: x.name ?? null } : null);

/** A text cut at 20,000 characters. */
function cut(text: unknown): string {
  const s = typeof text === 'string' ? text : '';
  return s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT)}… (truncated)` : s;
}

export const slimTask = (t: RawTask) => ({
  gid: t.gid,
  name: t.name ?? null,
  completed: !!t.completed,
  assignee: nameOf(t.assignee),
  due: t.due_at || t.due_on || null,
  url: t.permalink_url ?? null,
});

/**
 * Custom fields as `{ "Priority": "High" }`, by the values Asana displays; a repeated name gets its
 * gid. A Map, then Object.fromEntries: a field named "__proto__" is a key like any other.
 */
function customFields(fields: RawTask['custom_fields']): Record<string, string | null> {
  const out = new Map<string, string | null>();
  for (const f of Array.isArray(fields) ? fields : []) {
    if (!f || typeof f.name !== 'string') continue;
    out.set(out.has(f.name) ? `${f.name} (${f.gid})` : f.name, f.display_value ?? null);
  }
  return Object.fromEntries(out);
}

export const detailTask = (t: RawTask) => ({
  gid: t.gid,
  name: t.name ?? null,
  type: t.resource_subtype ?? null,
  completed: !!t.completed,
  completedAt: t.completed_at ?? null,
  assignee: t.assignee ? { gid: t.assignee.gid, name: t.assignee.name ?? null, email: t.assignee.email ?? null } : null,
  dueOn: t.due_on ?? null,
  dueAt: t.due_at ?? null,
  startOn: t.start_on ?? null,
  projects: (Array.isArray(t.memberships) ? t.memberships : []).flatMap((m) =>
    m && m.project
      ? [
          {
            gid: m.project.gid,
            name: m.project.name ?? null,
            section: nameOf(m.section),
            sectionGid: m.section ? m.section.gid : null,
          },
        ]
      : [],
  ),
  parent: ref(t.parent),
  tags: (Array.isArray(t.tags) ? t.tags : []).map(nameOf).filter((n) => n !== null),
  customFields: customFields(t.custom_fields),
  subtasks: typeof t.num_subtasks === 'number' ? t.num_subtasks : null,
  createdBy: nameOf(t.created_by),
  createdAt: t.created_at ?? null,
  modifiedAt: t.modified_at ?? null,
  workspace: ref(t.workspace),
  url: t.permalink_url ?? null,
  notes: cut(t.notes),
});

export const slimProject = (p: RawProject) => ({
  gid: p.gid,
  name: p.name ?? null,
  archived: !!p.archived,
  owner: nameOf(p.owner),
  team: nameOf(p.team),
  dueOn: p.due_on ?? null,
  url: p.permalink_url ?? null,
});

export const detailProject = (p: RawProject) => {
  const status = p.current_status_update;
  return {
    ...slimProject(p),
    completed: !!p.completed,
    startOn: p.start_on ?? null,
    workspace: ref(p.workspace),
    privacy: p.privacy_setting ?? null,
    createdAt: p.created_at ?? null,
    modifiedAt: p.modified_at ?? null,
    status: status ? { title: status.title ?? null, type: status.status_type ?? null } : null,
    notes: cut(p.notes),
  };
};

export const slimComment = (s: RawStory) => ({
  gid: s.gid,
  author: nameOf(s.created_by),
  createdAt: s.created_at ?? null,
  text: cut(s.text),
});
