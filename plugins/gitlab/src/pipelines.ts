/**
 * @module plugins/gitlab/src/pipelines
 * CI/CD: list pipelines, read one with all its jobs, run, retry or cancel one, and read a job's log
 * cleaned of colour codes and section markers.
 */
import { changes, collectPages, defineTool, reads, z, type PluginContext } from 'workbench/plugin-sdk';
import { api, get, list, paging, projectPath, send, whole } from './api.js';
import { orNull, slimJob, slimPipeline, who, type Job, type Pipeline } from './shape.js';
import { paged, project, sha, sort, text255, username } from './schema.js';

/** pages of jobs (100 each) gitlab_get_pipeline reads at most */
const MAX_JOB_PAGES = 5;
/** gitlab_get_job_log cleans at most this many times max_chars raw characters from the log's end */
const LOG_TAIL_FACTOR = 4;

export const listPipelines = defineTool({
  description:
    'Lists CI/CD pipelines of a GitLab project, newest first, filtered by branch or tag (ref), status (failed, running, success, …), commit sha, source or the user who started them. Rows: id, status, ref, sha, source, times and web URL. When `next` is not null, pass it as `page`. Use gitlab_get_pipeline for its jobs.',
  input: z.object({
    ...project,
    ref: text255.optional().describe('Branch or tag.'),
    status: z
      .enum([
        'created',
        'waiting_for_resource',
        'preparing',
        'pending',
        'running',
        'success',
        'failed',
        'canceled',
        'skipped',
        'manual',
        'scheduled',
      ])
      .optional(),
    scope: z.enum(['running', 'pending', 'finished', 'branches', 'tags']).optional(),
    sha: sha.optional(),
    source: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe('How it was started: push, web, schedule, merge_request_event, api, trigger, parent_pipeline, …'),
    username: username.optional().describe('Only pipelines started by this username.'),
    order_by: z.enum(['id', 'status', 'ref', 'updated_at', 'user_id']).default('id'),
    sort,
    ...paged,
  }),
  annotations: reads('List pipelines', { idempotent: true }),
  handler: async (ctx, a) => {
    const query = {
      ref: a.ref,
      status: a.status,
      scope: a.scope,
      sha: a.sha,
      source: a.source,
      username: a.username,
      order_by: a.order_by,
      sort: a.sort,
      ...paging(a),
    };
    const { rows, next } = await list<Pipeline>(ctx, `${projectPath(ctx, a)}/pipelines`, {
      query,
      action: 'pipelines',
    });
    return { pipelines: rows.map(slimPipeline), next };
  },
});

export const getPipeline = defineTool({
  description:
    "Reads one GitLab CI/CD pipeline with all its jobs: status, ref, sha, who started it, duration, coverage, YAML errors, a count of jobs by status, and each job's id, name, stage, status, failure reason and duration. Use it to find which job failed, then gitlab_get_job_log for that job's log.",
  input: z.object({ ...project, pipeline_id: z.int().min(1).describe("The pipeline's id (not its iid).") }),
  annotations: reads('Get pipeline and its jobs', { idempotent: true }),
  handler: async (ctx, a) => {
    const path = `${projectPath(ctx, a)}/pipelines/${a.pipeline_id}`;
    const p = await get<Pipeline>(ctx, path, { action: `pipeline ${a.pipeline_id}` });
    // a big pipeline has hundreds of jobs: follow the pages (the failed one may be on any of them)
    const fetchPage = async (page: number | null) => {
      const { rows, next } = await list<Job>(ctx, `${path}/jobs`, {
        query: { per_page: 100, page: page ?? 1 },
        action: `jobs of pipeline ${a.pipeline_id}`,
      });
      return { items: rows, next };
    };
    const { items: jobs, next } = await collectPages(ctx, null, fetchPage, {
      limit: MAX_JOB_PAGES * 100,
      maxPages: MAX_JOB_PAGES,
    });
    const summary = new Map<string, number>();
    for (const j of jobs) summary.set(String(j.status), (summary.get(String(j.status)) || 0) + 1);
    return {
      ...slimPipeline(p),
      user: who(p.user),
      started_at: p.started_at || null,
      finished_at: p.finished_at || null,
      duration: orNull(p.duration),
      coverage: p.coverage || null,
      yaml_errors: p.yaml_errors || null,
      job_summary: Object.fromEntries(summary),
      jobs: jobs.map(slimJob),
      ...(next !== null ? { jobs_truncated: `only the first ${jobs.length} jobs are listed` } : {}),
    };
  },
});

export const createPipeline = defineTool({
  description:
    'Runs (triggers, starts) a new GitLab CI/CD pipeline on a branch or tag, optionally with CI/CD variables, and returns its id, status and web URL. Follow it with gitlab_get_pipeline.',
  input: z.object({
    ...project,
    ref: text255.describe('Branch or tag to run the pipeline on.'),
    variables: z
      .array(
        z.strictObject({
          key: z.string().regex(/^[A-Za-z0-9_]{1,255}$/),
          value: z.string().max(10000),
          variable_type: z.enum(['env_var', 'file']).optional().describe('Default env_var.'),
        }),
      )
      .max(50)
      .optional()
      .describe('CI/CD variables for this pipeline.'),
  }),
  annotations: changes('Run pipeline'),
  handler: async (ctx, a) => {
    const body = { ref: a.ref, variables: a.variables?.length ? a.variables : undefined };
    return slimPipeline(
      await send<Pipeline>(ctx, 'POST', `${projectPath(ctx, a)}/pipeline`, body, `creating a pipeline on ${a.ref}`),
    );
  },
});

/** Retries or cancels one pipeline: both answer with the pipeline as it is afterwards. */
async function pipelineAction(
  ctx: PluginContext,
  a: { project: unknown; pipeline_id: number },
  verb: 'retry' | 'cancel',
) {
  const action = `${verb === 'retry' ? 'retrying' : 'canceling'} pipeline ${a.pipeline_id}`;
  const p = await send<Pipeline>(ctx, 'POST', `${projectPath(ctx, a)}/pipelines/${a.pipeline_id}/${verb}`, {}, action);
  return { ...slimPipeline(p), action: verb === 'retry' ? 'retried' : 'canceled' };
}

const pipelineId = {
  pipeline_id: z.int().min(1).describe("The pipeline's id (not its iid), from gitlab_list_pipelines."),
};

export const retryPipeline = defineTool({
  description:
    'Retries the failed or canceled jobs of a GitLab CI/CD pipeline (re-runs it) and returns the pipeline with its new status. Follow it with gitlab_get_pipeline.',
  input: z.object({ ...project, ...pipelineId }),
  annotations: changes('Retry pipeline'),
  handler: (ctx, a) => pipelineAction(ctx, a, 'retry'),
});

export const cancelPipeline = defineTool({
  description:
    'Cancels (stops) a running or pending GitLab CI/CD pipeline: its jobs that have not finished are canceled. Returns the pipeline with its new status (canceling, then canceled). A finished pipeline is left as it is.',
  input: z.object({ ...project, ...pipelineId }),
  annotations: changes('Cancel pipeline', { idempotent: true }),
  handler: (ctx, a) => pipelineAction(ctx, a, 'cancel'),
});

/**
 * ANSI colour codes and GitLab's collapsible-section markers, which a job log is full of, and the
 * text a carriage return overwrote. Each pattern is linear in the log's length (the log is the
 * upstream's text, and one synchronous step of the sandbox has a CPU limit): the overwritten-text
 * one is anchored at a line start (unanchored it rescans the rest of a long line from every
 * position), and a marker's `[options]` is looked for on its own line only, at most 256 characters.
 */
function plainLog(text: string): string {
  return text
    .replace(/\x1b\[[0-9;]*[A-Za-z]/g, '')
    .replace(/section_(start|end):\d+:[A-Za-z0-9_.-]+(\[[^\]\n]{0,256}\])?\r?/g, '')
    .replace(/\r\n/g, '\n')
    .replace(/^[^\n]*\r(?!\n)/gm, '');
}

export const getJobLog = defineTool({
  description:
    "Reads the log (trace) of one GitLab CI/CD job, with colour codes and section markers removed, and the job's name, stage, status and failure reason. Long logs are cut to their last max_chars characters, where a failure usually shows; raw_chars is the log's length as sent, and total_chars its cleaned length (null when the log is over 4 × max_chars, because then only its end is cleaned). Find the job id with gitlab_get_pipeline.",
  input: z.object({
    ...project,
    job_id: z.int().min(1),
    max_chars: z.int().min(1000).max(500000).default(20000).describe('Characters from the end of the log at most.'),
  }),
  annotations: reads('Get job log', { idempotent: true }),
  handler: async (ctx, a) => {
    const path = `${projectPath(ctx, a)}/jobs/${a.job_id}`;
    const job = await get<Job>(ctx, path, { action: `job ${a.job_id}` });
    const tooLarge = () =>
      `The log of job ${a.job_id} is larger than the gateway accepts (GW_ERR_BRIDGE_RESPONSE_TOO_LARGE), so not even its end can be read here (a smaller max_chars does not help: the whole log is sent). ${job.web_url ? `Open it in GitLab: ${job.web_url} (raw text: ${job.web_url}/raw).` : 'Open the job in GitLab.'}`;
    const { data: text } = await whole(
      api.request<string>(ctx, 'GET', `${path}/trace`, {
        accept: 'text/plain',
        expect: 'text',
        action: `log of job ${a.job_id}`,
      }),
      tooLarge,
    );
    // only the tail that can be returned is cleaned: from a line start within the last
    // LOG_TAIL_FACTOR × max_chars raw characters (what cleaning removes is seldom more than that)
    let raw = text;
    const partial = text.length > LOG_TAIL_FACTOR * a.max_chars;
    if (partial) {
      raw = text.slice(text.length - LOG_TAIL_FACTOR * a.max_chars);
      const nl = raw.indexOf('\n');
      if (nl >= 0 && nl < raw.length - 1) raw = raw.slice(nl + 1);
    }
    const clean = plainLog(raw);
    const log = clean.length > a.max_chars ? clean.slice(clean.length - a.max_chars) : clean;
    const cut = partial || clean.length > a.max_chars;
    const why = '(the end of a log is where a failure shows); pass a larger max_chars for more';
    const note = partial
      ? `only the last ${log.length} characters of a log of ${text.length} characters (counted before colour codes and section markers were removed) ${why}`
      : `only the last ${a.max_chars} of ${clean.length} characters ${why}`;
    return {
      job: { ...slimJob(job), pipeline_id: job.pipeline ? job.pipeline.id : null, ref: job.ref || null },
      // the length of the whole cleaned log is known only when the whole log was cleaned
      total_chars: partial ? null : clean.length,
      raw_chars: text.length,
      truncated: cut,
      ...(cut ? { note } : {}),
      log,
    };
  },
});
