/**
 * @module plugins/atlassian-bitbucket/src/repo-ops
 * Two things done to or with a repository: stopping a running pipeline, and the URLs to clone it
 * (never with a credential in them: the agent is told how to authenticate instead).
 */
import { changes, defineTool, plainCloneUrl, reads, segment, z } from 'workbench/plugin-sdk';
import { bb, call, repoPath } from './api.js';
import { repo } from './fields.js';
import { slimPipeline, type Pipeline, type Repo } from './shape.js';

export const stopPipeline = defineTool({
  description:
    'Stop (cancel, abort) a running or pending Bitbucket Pipelines build, by its uuid from bitbucket_list_pipelines or bitbucket_trigger_pipeline. Returns the pipeline as it is afterwards (state STOPPING, then COMPLETED with result STOPPED).',
  input: z.object({
    ...repo,
    pipeline_uuid: z
      .string()
      .regex(/^\{?[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}\}?$/)
      .describe('The pipeline uuid, with or without braces, e.g. "{6f1e…}".'),
  }),
  annotations: changes('Stop pipeline', { idempotent: true }),
  async handler(ctx, a) {
    const uuid = `{${a.pipeline_uuid.replace(/^\{|\}$/g, '')}}`;
    const path = `${repoPath(a)}/pipelines/${segment(uuid, 'pipeline_uuid')}`;
    await call(ctx, 'POST', `${path}/stopPipeline`, {
      action: `stop pipeline ${uuid} of ${a.workspace}/${a.repo_slug}`,
      scope: 'pipeline:write',
      hints: {
        400: 'It may have finished already: read it with bitbucket_list_pipelines.',
        409: 'It may have finished already: read it with bitbucket_list_pipelines.',
      },
    });
    const p = await bb<Pipeline>(ctx, 'GET', path, {
      action: `read pipeline ${uuid} of ${a.workspace}/${a.repo_slug}`,
      scope: 'pipeline',
    });
    return { ...slimPipeline(p ?? { uuid }, a), stop_requested: true };
  },
});

/** How to authenticate a clone of a Bitbucket repository: the agent's own credential, never the connection's token. */
const CLONE_AUTH = {
  https:
    'Git asks for a username and password: use your Bitbucket username and an API token (or app password) with repository read (write to push) permission as the password, or a credential helper. This gateway never hands out its own token.',
  ssh: 'Use an SSH key added to your Bitbucket account (Personal settings > SSH keys) or as a repository access key.',
};

export const getCloneUrl = defineTool({
  description:
    'The clone URL of a Bitbucket repository (HTTPS, and SSH) to git clone it, with its main branch, and how to authenticate: the URLs never carry a token or user name (use your own Bitbucket API token, app password or SSH key; the gateway keeps its credential to itself).',
  input: z.object(repo),
  annotations: reads('Get clone URL', { idempotent: true }),
  async handler(ctx, a) {
    const r = (await bb<Repo>(ctx, 'GET', repoPath(a), {
      action: `read repository ${a.workspace}/${a.repo_slug}`,
      scope: 'repository',
    }))!;
    const links = r.links?.['clone'];
    const byName = new Map<string, unknown>();
    for (const c of Array.isArray(links) ? links : []) if (c && c.name) byName.set(c.name, c.href);
    return {
      repository: r.full_name ?? `${a.workspace}/${a.repo_slug}`,
      https: plainCloneUrl(byName.get('https')),
      ssh: plainCloneUrl(byName.get('ssh')),
      main_branch: r.mainbranch?.name ?? null,
      private: r.is_private ?? null,
      authenticate: CLONE_AUTH,
    };
  },
});
