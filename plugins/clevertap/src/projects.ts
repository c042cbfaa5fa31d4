/**
 * @module plugins/clevertap/src/projects
 * The projects of the connection (from its config: names, account ids and regions, never a
 * passcode), which one tools use by default, and how to choose another.
 */
import { defineTool, reads, z } from 'workbench/plugin-sdk';
import { defaultProject, projectsOf, shown } from './api.js';

export const listProjects = defineTool({
  description:
    'List the CleverTap projects (apps or environments, each its own CleverTap account) this connection can read: name, account id and region, and which one the other clevertap tools use when called without `project`. Pass a project\'s name or account id as `project` to any clevertap tool to use it; the default is chosen when the connection is made (its "Default project" field), else it is the first project.',
  input: z.object({}),
  annotations: reads('List projects'),
  handler: async (ctx) => {
    const projects = projectsOf(ctx);
    const chosen = defaultProject(ctx, projects);
    const fallback = chosen ?? projects[0];
    return {
      projects: projects.map((p) => ({ ...shown(p), default: p === fallback })),
      count: projects.length,
      defaultProject: fallback ? shown(fallback) : null,
      defaultFrom: chosen ? 'the connection\'s "Default project" field' : 'the first project of the connection',
      note: 'Pass project (a name or account id) to any clevertap tool to use another project. To change the default for good, reconnect clevertap and set "Default project".',
    };
  },
});
