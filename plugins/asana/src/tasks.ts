/**
 * @module plugins/asana/src/tasks
 * The task tools: list, read, create, update, comment on, read the comments of, search, and put a
 * task in another project or section.
 */
import { changes, defineTool, path, reads, z, type QueryParams } from 'workbench/plugin-sdk';
import { asana, list, nextOf, workspaceOf } from './api.js';
import { assignee, cursor, date, gid, limit, project, task, workspace } from './fields.js';
import {
  detailTask,
  slimComment,
  slimTask,
  STORY_FIELDS,
  TASK_DETAIL_FIELDS,
  TASK_ROW_FIELDS,
  type RawStory,
  type RawTask,
} from './shape.js';

const DATE_TIME = '[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,6})?)?(Z|[+-][0-9]{2}:[0-9]{2})';

export const listTasks = defineTool({
  description:
    'List Asana tasks of one project, of one section (board column), or of one assignee in a workspace (`assignee: "me"` for my tasks, my to-do list). Give exactly one of project, section or assignee. `completedSince: "now"` keeps only incomplete (open) tasks. Returns slim rows (gid, name, completed, assignee, due, link); when `next` is not null pass it as `cursor`. Use asana_get_task for details, asana_search_tasks to search by text across a workspace.',
  input: z.object({
    project: gid.optional().describe('Project gid: list its tasks.'),
    section: gid.optional().describe('Section gid: list its tasks.'),
    assignee: assignee.optional().describe('"me", a user gid or an email: list that person\'s tasks.'),
    workspace: gid
      .optional()
      .describe('Workspace gid, with assignee; may be omitted when you belong to only one workspace.'),
    completedSince: z
      .string()
      .regex(
        /^(now|[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?)$/,
      )
      .optional()
      .describe(
        'Only tasks that are incomplete or were completed since this date/time (ISO 8601); "now" lists only incomplete tasks.',
      ),
    limit: limit(100, 50, 'Tasks per page.'),
    cursor: cursor('previous page (same filters)'),
  }),
  annotations: reads('List tasks'),
  async handler(ctx, args) {
    if ([args.project, args.section, args.assignee].filter(Boolean).length !== 1)
      throw new Error('Give exactly one of project, section or assignee (with workspace) to say which tasks to list.');
    if (args.workspace && !args.assignee)
      throw new Error('`workspace` goes with `assignee` only: a project or section already names its workspace.');
    const by: QueryParams = args.assignee
      ? { assignee: args.assignee, workspace: await workspaceOf(ctx, args.workspace) }
      : { project: args.project, section: args.section };
    const action = args.assignee
      ? `list the tasks assigned to ${args.assignee}`
      : args.project
        ? `list the tasks of project ${args.project}`
        : `list the tasks of section ${args.section}`;
    const query = {
      ...by,
      completed_since: args.completedSince,
      limit: args.limit,
      offset: args.cursor,
      opt_fields: TASK_ROW_FIELDS,
    };
    const env = await asana<RawTask[]>(ctx, 'GET', '/tasks', { query, action });
    return { tasks: list(env).map(slimTask), next: nextOf(env) };
  },
});

export const getTask = defineTool({
  description:
    'Look at one Asana task by gid: name, notes (description), assignee, due and start dates, completed, the projects and sections it is in, parent task, tags, custom fields as name → displayed value, number of subtasks, creator, dates and link. Its discussion is read with asana_list_comments.',
  input: z.object({ task: gid.describe("Task gid (the number in the task's link).") }),
  annotations: reads('Get task'),
  async handler(ctx, args) {
    const env = await asana<RawTask>(ctx, 'GET', path`/tasks/${args.task}`, {
      query: { opt_fields: TASK_DETAIL_FIELDS },
      action: `read task ${args.task}`,
    });
    return detailTask(env.data || ({} as RawTask));
  },
});

/** due_on / due_at from dueOn / dueAt ('' clears); not both. */
function dueFields(args: { dueOn?: string | undefined; dueAt?: string | undefined }) {
  if (args.dueOn !== undefined && args.dueAt !== undefined)
    throw new Error('Give dueOn (a date) or dueAt (a date and time), not both.');
  return {
    ...(args.dueOn !== undefined ? { due_on: args.dueOn === '' ? null : args.dueOn } : {}),
    ...(args.dueAt !== undefined ? { due_at: args.dueAt === '' ? null : args.dueAt } : {}),
  };
}

export const createTask = defineTool({
  description:
    'Create (make, open) a new Asana task or to-do, or a subtask of another task with `parent`. Optionally assign it ("me", a gid or an email), set a due date (dueOn) or due time (dueAt), put it in projects, or in one section of a project (`section` with a single project). Without projects or parent, it goes to the workspace (the only one, or `workspace`). Returns the new task\'s gid and link.',
  input: z.object({
    name: z.string().min(1).max(1024).describe('Task name (title).'),
    notes: z.string().max(60000).optional().describe('Plain-text description.'),
    assignee: assignee.optional().describe('"me", a user gid or an email (asana_find_users finds gids).'),
    dueOn: date.optional().describe('Due date YYYY-MM-DD (not with dueAt).'),
    dueAt: z
      .string()
      .regex(new RegExp(`^${DATE_TIME}$`))
      .optional()
      .describe('Due date and time, ISO 8601 with a time zone, e.g. 2026-03-01T17:00:00Z (not with dueOn).'),
    projects: z
      .array(gid)
      .min(1)
      .max(10)
      .meta({ uniqueItems: true })
      .optional()
      .describe('Gids of projects to put the task in.'),
    section: gid.optional().describe('Gid of a section of the (single) project in `projects` to put the task in.'),
    parent: gid.optional().describe('Gid of the parent task: creates a subtask.'),
    workspace: gid
      .optional()
      .describe('Workspace gid, when neither projects nor parent are given and you belong to several workspaces.'),
  }),
  annotations: changes('Create task'),
  async handler(ctx, args) {
    const due = dueFields(args);
    const projects = args.projects || [];
    if (args.section && projects.length !== 1)
      throw new Error(
        "A section belongs to one project: give `projects` with exactly that project's gid beside `section`.",
      );
    const placed = args.section
      ? { memberships: [{ project: projects[0], section: args.section }] }
      : projects.length
        ? { projects }
        : {};
    const ws = args.workspace || (!projects.length && !args.parent ? await workspaceOf(ctx) : undefined);
    const data = {
      name: args.name,
      ...(args.notes ? { notes: args.notes } : {}),
      ...(args.assignee ? { assignee: args.assignee } : {}),
      ...due,
      ...placed,
      ...(args.parent ? { parent: args.parent } : {}),
      ...(ws ? { workspace: ws } : {}),
    };
    const env = await asana<RawTask>(ctx, 'POST', '/tasks', {
      query: { opt_fields: TASK_ROW_FIELDS },
      body: data,
      action: args.parent ? `create a subtask of task ${args.parent}` : `create the task "${args.name}"`,
    });
    return slimTask(env.data || ({} as RawTask));
  },
});

export const updateTask = defineTool({
  description:
    'Change an existing Asana task: complete it (done) or reopen it, rename it, replace its notes, reassign or unassign it, set or clear its due date or due time. Give only what changes. To put it in another project or section use asana_add_task_to_project.',
  input: z.object({
    task,
    name: z.string().min(1).max(1024).optional().describe('New name.'),
    notes: z
      .string()
      .max(60000)
      .optional()
      .describe('New plain-text description (replaces the old one; an empty string clears it).'),
    completed: z.boolean().optional().describe('true marks the task complete, false incomplete.'),
    assignee: z
      .string()
      .regex(/^(|me|[0-9]{1,30}|[^\s@]{1,200}@[^\s@]{1,200})$/)
      .optional()
      .describe('New assignee: "me", a user gid or an email; an empty string unassigns.'),
    dueOn: z
      .string()
      .regex(/^([0-9]{4}-[0-9]{2}-[0-9]{2})?$/)
      .optional()
      .describe('New due date YYYY-MM-DD; an empty string clears it.'),
    dueAt: z
      .string()
      .regex(new RegExp(`^(${DATE_TIME})?$`))
      .optional()
      .describe('New due date and time (ISO 8601 with a time zone); an empty string clears it.'),
  }),
  annotations: changes('Update task', { idempotent: true }),
  async handler(ctx, args) {
    const data = {
      ...(args.name !== undefined ? { name: args.name } : {}),
      ...(args.notes !== undefined ? { notes: args.notes } : {}),
      ...(args.completed !== undefined ? { completed: args.completed } : {}),
      ...(args.assignee !== undefined ? { assignee: args.assignee === '' ? null : args.assignee } : {}),
      ...dueFields(args),
    };
    const changed = Object.keys(data);
    if (!changed.length)
      throw new Error('Nothing to update: give at least one of name, notes, completed, assignee, dueOn or dueAt.');
    const env = await asana<RawTask>(ctx, 'PUT', path`/tasks/${args.task}`, {
      query: { opt_fields: TASK_ROW_FIELDS },
      body: data,
      action: `update task ${args.task}`,
    });
    return { ...slimTask(env.data || ({} as RawTask)), updated: changed };
  },
});

export const addComment = defineTool({
  description:
    "Add (post, leave, write) a plain-text comment on an Asana task; followers of the task are notified. Returns the comment's gid, author and time.",
  input: z.object({ task, text: z.string().min(1).max(30000).describe('Comment text.') }),
  annotations: changes('Add comment'),
  async handler(ctx, args) {
    const env = await asana<RawStory>(ctx, 'POST', path`/tasks/${args.task}/stories`, {
      query: { opt_fields: STORY_FIELDS },
      body: { text: args.text },
      action: `comment on task ${args.task}`,
    });
    return { task: args.task, ...slimComment(env.data || ({} as RawStory)) };
  },
});

/**
 * The comments of a task. Stories (comments and system activity alike) page 100 at a time, and
 * only comments are kept, so a cursor is the story page's offset token plus how many comments of
 * that page were already returned: `<offset>~<skip>` (offset empty for the first page).
 */
export const listComments = defineTool({
  description:
    "Read the comments (the discussion, the conversation) on an Asana task, oldest first, with author and time; the task's system activity (assignments, moves, edits) is left out. When `next` is not null, pass it as `cursor` for later comments.",
  input: z.object({ task, limit: limit(100, 20, 'Comments to return.'), cursor: cursor('previous call') }),
  annotations: reads('List comments'),
  async handler(ctx, args) {
    let offset: string | undefined;
    let skip = 0;
    if (args.cursor) {
      const at = args.cursor.lastIndexOf('~');
      const n = at < 0 ? NaN : Number(args.cursor.slice(at + 1));
      if (!Number.isInteger(n) || n < 0)
        throw new Error('`cursor` is not a `next` value of asana_list_comments: pass `next` as it was returned.');
      offset = args.cursor.slice(0, at) || undefined;
      skip = n;
    }
    const comments: Array<ReturnType<typeof slimComment>> = [];
    for (let page = 0; page < 10; page++) {
      const env = await asana<RawStory[]>(ctx, 'GET', path`/tasks/${args.task}/stories`, {
        query: { limit: 100, offset, opt_fields: STORY_FIELDS },
        action: `read the comments of task ${args.task}`,
      });
      const pageComments = list(env).filter((s) => s && s.type === 'comment');
      const take = pageComments.slice(skip, skip + args.limit - comments.length);
      comments.push(...take.map(slimComment));
      const following = nextOf(env);
      if (skip + take.length < pageComments.length)
        return { task: args.task, comments, next: `${offset ?? ''}~${skip + take.length}` };
      if (!following) return { task: args.task, comments, next: null };
      offset = following;
      skip = 0;
      if (comments.length >= args.limit) break;
    }
    return { task: args.task, comments, next: `${offset}~0` };
  },
});

export const searchTasks = defineTool({
  description:
    'Search Asana tasks across a workspace by text in the name or description, optionally filtered by assignee, project, completion, due date range or recent modification; slim rows sorted by last modified (or by due date, creation, completion, likes or relevance). Needs a paid Asana plan (free workspaces answer 402: use asana_list_tasks instead). Not paged: at most `limit` tasks, `more: true` when there may be others; narrow the filters. New changes take up to a minute to be searchable.',
  input: z.object({
    workspace,
    text: z.string().min(1).max(500).optional().describe('Words to find in task names and descriptions.'),
    assignee: assignee.optional().describe('Only tasks assigned to "me", a user gid or an email.'),
    project: gid.optional().describe('Only tasks in this project (gid).'),
    completed: z.boolean().optional().describe('true only completed tasks, false only incomplete ones; omit for both.'),
    dueBefore: date.optional().describe('Only tasks due before this date (YYYY-MM-DD).'),
    dueAfter: date.optional().describe('Only tasks due after this date (YYYY-MM-DD).'),
    modifiedAfter: z
      .string()
      .regex(
        new RegExp(
          `^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,6})?)?(Z|[+-][0-9]{2}:[0-9]{2}))?$`,
        ),
      )
      .optional()
      .describe('Only tasks changed after this date/time (ISO 8601).'),
    sortBy: z
      .enum(['modified_at', 'due_date', 'created_at', 'completed_at', 'likes', 'relevance'])
      .default('modified_at')
      .describe('Order of the results, newest/most first.'),
    limit: limit(100, 25, 'Tasks to return.'),
  }),
  annotations: reads('Search tasks'),
  async handler(ctx, args) {
    const ws = await workspaceOf(ctx, args.workspace);
    const query = {
      text: args.text,
      'assignee.any': args.assignee,
      'projects.any': args.project,
      completed: args.completed === undefined ? undefined : String(args.completed),
      'due_on.before': args.dueBefore,
      'due_on.after': args.dueAfter,
      'modified_at.after': args.modifiedAfter,
      sort_by: args.sortBy,
      limit: args.limit,
      opt_fields: [...TASK_ROW_FIELDS, 'modified_at'],
    };
    const env = await asana<RawTask[]>(ctx, 'GET', path`/workspaces/${ws}/tasks/search`, {
      query,
      action: `search tasks in workspace ${ws}`,
      paid: 'task search is only available on paid Asana plans (the workspace, or a team you are in, must be premium). Use asana_list_tasks by project, section or assignee instead',
    });
    const tasks = list(env).map((t) => ({ ...slimTask(t), modifiedAt: t.modified_at ?? null }));
    return { workspace: ws, tasks, count: tasks.length, more: tasks.length >= args.limit };
  },
});

export const addTaskToProject = defineTool({
  description:
    'Add an existing Asana task to another project as well (it stays in the ones it is in), optionally into one section (column) of it; with a project the task is already in, this moves it to that section. asana_list_sections gives section gids.',
  input: z.object({
    task,
    project,
    section: gid.optional().describe('Section gid within that project; omit to add the task without a section choice.'),
  }),
  annotations: changes('Add task to project or section', { idempotent: true }),
  async handler(ctx, args) {
    await asana(ctx, 'POST', path`/tasks/${args.task}/addProject`, {
      body: { project: args.project, ...(args.section ? { section: args.section } : {}) },
      action: args.section
        ? `add task ${args.task} to section ${args.section} of project ${args.project}`
        : `add task ${args.task} to project ${args.project}`,
    });
    return { task: args.task, project: args.project, section: args.section ?? null };
  },
});
