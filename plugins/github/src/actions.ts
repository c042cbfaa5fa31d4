/**
 * @module plugins/github/src/actions
 * CI: check runs of a commit or pull request, and GitHub Actions workflows and their runs (list,
 * read with the jobs, dispatch, re-run, cancel).
 */
import { changes, clip, collectPages, defineTool, reads, segment, segments, z } from 'workbench/plugin-sdk';
import { gh, paging, repoPath } from './api.js';
import { page, perPage, repoArgs, runId, SHA } from './args.js';
import { slimRun, type Pull, type Run } from './shape.js';

/** pages of jobs (100 each) github_get_workflow_run reads at most */
const MAX_JOB_PAGES = 5;

export const listCheckRuns = defineTool({
  description:
    'Shows the CI check results (GitHub Actions and other apps) for a commit, branch or tag, or for the head of a pull request: a summary count by outcome plus each check\'s name, status, conclusion, times and link. Use it to answer "is CI green on this PR?". Pass exactly one of ref or pull_number.',
  input: z.object({
    ...repoArgs,
    ref: z.string().min(1).max(255).optional().describe('Commit SHA, branch or tag.'),
    pull_number: z.int().min(1).optional().describe('Pull request number: its head commit is checked.'),
    check_name: z.string().max(200).optional().describe('Only checks with this name.'),
    status: z.enum(['queued', 'in_progress', 'completed']).optional().describe('Only checks in this status.'),
    filter: z
      .enum(['latest', 'all'])
      .default('latest')
      .describe('"latest": most recent run of each check; "all": every attempt.'),
    per_page: perPage(30),
    page,
  }),
  annotations: reads('CI checks of a commit or pull request', { idempotent: true }),
  handler: async (ctx, a) => {
    if (!a.ref === !a.pull_number)
      throw new Error('Pass exactly one of ref (a branch, tag or commit SHA) or pull_number.');
    let ref = a.ref ?? '';
    if (a.pull_number) {
      const { data: pull } = await gh<Pull>(ctx, 'GET', `${repoPath(a)}/pulls/${a.pull_number}`, {
        what: `pull request #${a.pull_number}`,
      });
      ref = pull.head?.sha ?? '';
    }
    type Check = {
      id: number;
      name: string;
      app?: { slug?: string; name?: string } | null;
      status: string;
      conclusion?: string | null;
      started_at?: string | null;
      completed_at?: string | null;
      html_url?: string | null;
      details_url?: string | null;
      output?: { title?: string | null; summary?: string | null };
    };
    const query = { check_name: a.check_name, status: a.status, filter: a.filter, ...paging(a) };
    const what = `checks of ${a.ref || `#${a.pull_number}`}`;
    const { data, next } = await gh<{ total_count: number; check_runs?: Check[] }>(
      ctx,
      'GET',
      `${repoPath(a)}/commits/${segments(ref, 'ref')}/check-runs`,
      { query, what },
    );
    const runs = (data.check_runs || []).map((c) => ({
      id: c.id,
      name: c.name,
      app: c.app ? c.app.slug || c.app.name : null,
      status: c.status,
      conclusion: c.conclusion || null,
      started_at: c.started_at || null,
      completed_at: c.completed_at || null,
      html_url: c.html_url || c.details_url || null,
      summary: clip(c.output?.title || c.output?.summary || '', 300) || null,
    }));
    const summary: Record<string, number> = {};
    for (const r of runs) summary[r.conclusion || r.status] = (summary[r.conclusion || r.status] || 0) + 1;
    return { ref, total_count: data.total_count, summary, check_runs: runs, next };
  },
});

export const listWorkflows = defineTool({
  description:
    'Lists the GitHub Actions workflows defined in a repository: id, name, file path, state (active/disabled), plus `next`. The id or file name is what github_trigger_workflow and github_list_workflow_runs take.',
  input: z.object({ ...repoArgs, per_page: perPage(30), page }),
  annotations: reads('List Actions workflows', { idempotent: true }),
  handler: async (ctx, a) => {
    type Workflow = { id: number; name: string; path: string; state: string; html_url: string };
    const { data, next } = await gh<{ total_count: number; workflows?: Workflow[] }>(
      ctx,
      'GET',
      `${repoPath(a)}/actions/workflows`,
      { query: paging(a), what: 'workflows' },
    );
    return {
      total_count: data.total_count,
      workflows: (data.workflows || []).map((w) => ({
        id: w.id,
        name: w.name,
        path: w.path,
        state: w.state,
        html_url: w.html_url,
      })),
      next,
    };
  },
});

const RUN_STATUSES = [
  'completed',
  'action_required',
  'cancelled',
  'failure',
  'neutral',
  'skipped',
  'stale',
  'success',
  'timed_out',
  'in_progress',
  'queued',
  'requested',
  'waiting',
  'pending',
] as const;

export const listWorkflowRuns = defineTool({
  description:
    'Lists GitHub Actions runs (CI builds) of a repository or of one workflow, newest first, filtered by branch, status (e.g. recent failures), event, actor or commit. Returns id, workflow name, title, status, conclusion, branch, head SHA, actor, dates and html_url, plus `next`.',
  input: z.object({
    ...repoArgs,
    workflow: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe('Workflow id or file name (e.g. "ci.yml") to limit to one workflow.'),
    branch: z.string().min(1).max(255).optional().describe('Only runs on this branch.'),
    status: z.enum(RUN_STATUSES).optional().describe('Only runs with this status or conclusion.'),
    event: z
      .string()
      .max(100)
      .optional()
      .describe('Only runs triggered by this event, e.g. push, pull_request, workflow_dispatch, schedule.'),
    actor: z.string().max(39).optional().describe('Only runs started by this login.'),
    head_sha: z.string().regex(SHA).optional().describe('Only runs for this commit.'),
    per_page: perPage(20),
    page,
  }),
  annotations: reads('List workflow runs', { idempotent: true }),
  handler: async (ctx, a) => {
    const runs = a.workflow
      ? `${repoPath(a)}/actions/workflows/${segment(a.workflow, 'workflow')}/runs`
      : `${repoPath(a)}/actions/runs`;
    const query = {
      branch: a.branch,
      status: a.status,
      event: a.event,
      actor: a.actor,
      head_sha: a.head_sha,
      ...paging(a),
    };
    const { data, next } = await gh<{ total_count: number; workflow_runs?: Run[] }>(ctx, 'GET', runs, {
      query,
      what: 'workflow runs',
    });
    return { total_count: data.total_count, runs: (data.workflow_runs || []).map(slimRun), next };
  },
});

interface Job {
  id: number;
  name: string;
  status: string;
  conclusion?: string | null;
  started_at?: string | null;
  completed_at?: string | null;
  html_url: string;
  steps?: Array<{ name: string; conclusion?: string | null }>;
}

export const getWorkflowRun = defineTool({
  description:
    "Returns one GitHub Actions run with its jobs (up to 500; jobs_truncated says when there are more): each job's status, conclusion, times, link and the names of failed steps. Use it to see why CI failed before re-running.",
  input: z.object({ ...repoArgs, run_id: runId }),
  annotations: reads('Get a workflow run and its jobs', { idempotent: true }),
  handler: async (ctx, a) => {
    const path = `${repoPath(a)}/actions/runs/${a.run_id}`;
    const { data: run } = await gh<Run>(ctx, 'GET', path, { what: `workflow run ${a.run_id}` });
    // a matrix build can have hundreds of jobs: follow the pages (a failure may be on any of them)
    let total = 0;
    let seen = 0;
    const jobs = await collectPages<Job, number>(
      ctx,
      1,
      async (jobPage) => {
        const query = { filter: 'latest', per_page: 100, page: jobPage };
        const { data, next } = await gh<{ total_count: number; jobs?: Job[] }>(ctx, 'GET', `${path}/jobs`, {
          query,
          what: `jobs of run ${a.run_id}`,
        });
        seen += (data.jobs || []).length;
        total = data.total_count || seen;
        return { items: data.jobs || [], next: next === null ? null : (jobPage ?? 1) + 1 };
      },
      { limit: MAX_JOB_PAGES * 100, maxPages: MAX_JOB_PAGES },
    );
    const slimJobs = jobs.items.map((j) => ({
      id: j.id,
      name: j.name,
      status: j.status,
      conclusion: j.conclusion || null,
      started_at: j.started_at || null,
      completed_at: j.completed_at || null,
      html_url: j.html_url,
      failed_steps: (j.steps || []).filter((s) => s.conclusion === 'failure').map((s) => s.name),
    }));
    const result = { ...slimRun(run), total_jobs: total, jobs: slimJobs };
    if (jobs.next === null) return result;
    return { ...result, jobs_truncated: `only the first ${slimJobs.length} of ${total} jobs are listed` };
  },
});

export const triggerWorkflow = defineTool({
  description:
    'Starts a GitHub Actions workflow that has a workflow_dispatch trigger, on a branch or tag, with optional inputs. Returns the new run id and URL when GitHub provides them; otherwise find the run with github_list_workflow_runs.',
  input: z.object({
    ...repoArgs,
    workflow: z.string().min(1).max(200).describe('Workflow id or file name, e.g. "deploy.yml".'),
    ref: z.string().min(1).max(255).describe('Branch or tag to run the workflow on.'),
    inputs: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
      // JSON object keys are strings anyway: the manifest never said so with propertyNames
      .meta({ maxProperties: 25, propertyNames: undefined })
      .optional()
      .describe('Inputs declared by the workflow\'s workflow_dispatch trigger, e.g. {"environment": "staging"}.'),
  }),
  annotations: changes('Run a workflow'),
  handler: async (ctx, a) => {
    const body = { ref: a.ref, inputs: a.inputs, return_run_details: true };
    type Dispatched = { workflow_run_id?: number; run_url?: string; html_url?: string } | undefined;
    const path = `${repoPath(a)}/actions/workflows/${segment(a.workflow, 'workflow')}/dispatches`;
    const { status, data } = await gh<Dispatched>(ctx, 'POST', path, { body, what: `dispatching ${a.workflow}` });
    if (status === 200 && data)
      return {
        dispatched: true,
        run_id: data.workflow_run_id || null,
        run_url: data.run_url || null,
        html_url: data.html_url || null,
      };
    return {
      dispatched: true,
      run_id: null,
      note: 'GitHub accepted the dispatch without run details; find the run with github_list_workflow_runs (event "workflow_dispatch").',
    };
  },
});

export const rerunWorkflow = defineTool({
  description:
    'Re-runs a GitHub Actions run: every job, or only the failed ones (failed_only). Returns once GitHub accepted the request; follow it with github_get_workflow_run.',
  input: z.object({
    ...repoArgs,
    run_id: runId,
    failed_only: z.boolean().default(false).describe('Re-run only the failed jobs (and what depends on them).'),
    enable_debug_logging: z.boolean().default(false).describe('Turn on runner debug logging.'),
  }),
  annotations: changes('Re-run a workflow run'),
  handler: async (ctx, a) => {
    const path = `${repoPath(a)}/actions/runs/${a.run_id}/${a.failed_only ? 'rerun-failed-jobs' : 'rerun'}`;
    await gh(ctx, 'POST', path, {
      body: { enable_debug_logging: a.enable_debug_logging },
      what: `re-running run ${a.run_id}`,
    });
    return { rerun_requested: true, run_id: a.run_id, failed_only: !!a.failed_only };
  },
});

export const cancelWorkflowRun = defineTool({
  description: 'Cancels a queued or in-progress GitHub Actions run. Returns once GitHub accepted the request.',
  input: z.object({ ...repoArgs, run_id: runId }),
  annotations: changes('Cancel a workflow run', { destructive: true, idempotent: true }),
  handler: async (ctx, a) => {
    await gh(ctx, 'POST', `${repoPath(a)}/actions/runs/${a.run_id}/cancel`, { what: `cancelling run ${a.run_id}` });
    return { cancel_requested: true, run_id: a.run_id };
  },
});
