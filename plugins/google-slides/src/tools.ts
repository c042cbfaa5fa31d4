/**
 * @module plugins/google-slides/src/tools
 * The Slides tools: read a presentation as slim text, create one, apply a batch of Slides API
 * requests (guarded by a revision when given), and build a deck from Markdown (markdown.ts).
 */
import { changes, defineTool, path, reads, z, type PluginContext } from 'workbench/plugin-sdk';
import { api, presentationIdOf, presentationUrl, type BatchAnswer } from './api.js';
import { deckRequests, parseMarkdown, slideId } from './markdown.js';
import { READ_FIELDS, slideText, type Presentation } from './text.js';

const presentationId = z
  .string()
  .min(1)
  .max(500)
  .describe("The presentation's id, or its Google Slides link (https://docs.google.com/presentation/d/<id>/edit…).");

export const getPresentation = defineTool({
  description:
    'Read (open, view, get the text of) a Google Slides presentation (a deck) as slim text: its title, revisionId and, per slide, its objectId, title, the text of its other boxes (tables as | rows |, images as [image]) and its speaker notes. Reads up to maxSlides slides from fromSlide; `nextSlide` says where to go on. Use the objectIds and revisionId with slides_batch_update.',
  input: z.object({
    presentationId,
    fromSlide: z
      .int()
      .min(0)
      .max(10000)
      .default(0)
      .describe('The first slide to return (0-based; the nextSlide of a previous call).'),
    maxSlides: z.int().min(1).max(200).default(50).describe('Slides to return at most.'),
    includeNotes: z.boolean().default(true).describe("Include each slide's speaker notes."),
  }),
  annotations: reads('Read presentation'),
  handler: async (ctx, a) => {
    const id = presentationIdOf(a.presentationId);
    const p = await api.json<Presentation>(ctx, 'GET', path`/${id}`, {
      query: { fields: READ_FIELDS },
      action: `read presentation ${id}`,
    });
    const all = p.slides ?? [];
    const end = Math.min(all.length, a.fromSlide + a.maxSlides);
    const slides = all.slice(a.fromSlide, end).map((s, i) => {
      const t = slideText(s, a.fromSlide + i);
      return a.includeNotes ? t : { ...t, notes: undefined };
    });
    return {
      presentationId: p.presentationId ?? id,
      title: p.title ?? null,
      revisionId: p.revisionId ?? null,
      url: presentationUrl(p.presentationId ?? id),
      slideCount: all.length,
      slides,
      nextSlide: end < all.length ? end : null,
    };
  },
});

/** Creates an empty presentation (Slides gives it one title slide). */
function create(ctx: PluginContext, title: string): Promise<Presentation> {
  return api.json<Presentation>(ctx, 'POST', '', { body: { title }, action: `create the presentation "${title}"` });
}

export const createPresentation = defineTool({
  description:
    "Create (make, start) a new, empty Google Slides presentation with a title; Slides gives it one title slide. Returns its presentationId, link and the first slide's objectId. To create a whole deck with content, use slides_create_from_markdown.",
  input: z.object({ title: z.string().min(1).max(255).describe("The presentation's title (its file name).") }),
  annotations: changes('Create presentation'),
  handler: async (ctx, a) => {
    const p = await create(ctx, a.title);
    const id = p.presentationId ?? '';
    return {
      presentationId: id,
      title: p.title ?? a.title,
      url: presentationUrl(id),
      revisionId: p.revisionId ?? null,
      slides: (p.slides ?? []).map((s) => s.objectId ?? null),
    };
  },
});

/** Applies requests; with `lock`, Google refuses them (400) when the presentation is no longer at that revision. */
function batch(ctx: PluginContext, id: string, requests: unknown[], lock: string | undefined, action: string) {
  return api.json<BatchAnswer>(ctx, 'POST', `${path`/${id}`}:batchUpdate`, {
    body: lock ? { requests, writeControl: { requiredRevisionId: lock } } : { requests },
    action,
    lock,
  });
}

export const batchUpdate = defineTool({
  description:
    'Change a Google Slides presentation with Slides API batchUpdate requests, applied together (all or none): e.g. {"createSlide": {…}}, {"insertText": {"objectId", "text", "insertionIndex"}}, {"replaceAllText": {"containsText": {"text", "matchCase"}, "replaceText"}}, {"deleteObject": {"objectId"}}, {"updateTextStyle": …}, {"createImage": …}, {"duplicateObject": …}. Object ids come from slides_get_presentation. Pass its revisionId to refuse the change if someone edited the deck since. Returns the replies (e.g. the ids of created objects) and the new revisionId.',
  input: z.object({
    presentationId,
    requests: z
      .array(z.record(z.string(), z.unknown()))
      .min(1)
      .max(500)
      .describe('Slides API Request objects, each with exactly one kind (createSlide, insertText, replaceAllText, …).'),
    revisionId: z
      .string()
      .min(1)
      .max(500)
      .optional()
      .describe(
        'The revisionId of your last read: the change is refused, not applied, if the presentation changed since.',
      ),
  }),
  annotations: changes('Update presentation', { destructive: true }),
  handler: async (ctx, a) => {
    const id = presentationIdOf(a.presentationId);
    a.requests.forEach((r, i) => {
      if (Object.keys(r).length !== 1)
        throw new Error(
          `requests[${i}] must hold exactly one request kind (such as {"insertText": {…}}), not ${Object.keys(r).length}.`,
        );
    });
    const answer = await batch(ctx, id, a.requests, a.revisionId, `update presentation ${id}`);
    return {
      presentationId: id,
      applied: a.requests.length,
      replies: answer.replies ?? [],
      revisionId: answer.writeControl?.requiredRevisionId ?? null,
      url: presentationUrl(id),
    };
  },
});

/** Adds the speaker notes: their shapes' ids exist only once the slides do, so they are read first. */
async function addNotes(ctx: PluginContext, id: string, notes: Array<[number, string]>): Promise<string | null> {
  const p = await api.json<Presentation>(ctx, 'GET', path`/${id}`, {
    query: { fields: 'slides(objectId,slideProperties(notesPage(notesProperties(speakerNotesObjectId))))' },
    action: `read the notes pages of presentation ${id}`,
  });
  const byId = new Map(
    (p.slides ?? []).map((s) => [s.objectId, s.slideProperties?.notesPage?.notesProperties?.speakerNotesObjectId]),
  );
  const requests = notes.flatMap(([i, text]) => {
    const objectId = byId.get(slideId(i));
    return objectId ? [{ insertText: { objectId, insertionIndex: 0, text } }] : [];
  });
  if (requests.length === 0) return null;
  const answer = await batch(ctx, id, requests, undefined, `add the speaker notes of presentation ${id}`);
  return answer.writeControl?.requiredRevisionId ?? null;
}

export const createFromMarkdown = defineTool({
  description:
    'Create a Google Slides presentation (a slide deck) from Markdown, e.g. to turn notes or an outline into slides with bullet points: a line of --- separates slides; a slide\'s first # heading is its title; other lines are its text, with - / * items as bullets and 1. items numbered (indent two spaces to nest), **bold** and [links](https://…) kept; lines after "Notes:" become the speaker notes. The first slide, a title with at most two plain lines, becomes a title slide. Returns the new presentation\'s id, link and slides.',
  input: z.object({
    title: z.string().min(1).max(255).describe("The presentation's title (its file name)."),
    markdown: z.string().min(1).max(100000).describe('The deck, slides separated by lines of ---.'),
  }),
  annotations: changes('Create presentation from Markdown'),
  handler: async (ctx, a) => {
    const slides = parseMarkdown(a.markdown);
    if (slides.length === 0)
      throw new Error('The Markdown holds no slide: write at least a # title or a line of text.');
    if (slides.length > 100) throw new Error(`The Markdown holds ${slides.length} slides; 100 at most in one call.`);
    const p = await create(ctx, a.title);
    const id = p.presentationId ?? '';
    const first = p.slides?.[0]?.objectId;
    const requests = [...deckRequests(slides), ...(first ? [{ deleteObject: { objectId: first } }] : [])];
    let revisionId: string | null;
    try {
      const answer = await batch(ctx, id, requests, undefined, `add the slides to presentation ${id}`);
      revisionId = answer.writeControl?.requiredRevisionId ?? null;
      const notes = slides.flatMap((s, i): Array<[number, string]> => (s.notes ? [[i, s.notes]] : []));
      if (notes.length > 0) revisionId = (await addNotes(ctx, id, notes)) ?? revisionId;
    } catch (err) {
      throw new Error(
        `The presentation "${a.title}" was created (${presentationUrl(id)}, id ${id}) but its slides were not all written: ${(err as Error).message}`,
      );
    }
    return {
      presentationId: id,
      title: p.title ?? a.title,
      url: presentationUrl(id),
      revisionId,
      slideCount: slides.length,
      slides: slides.map((s, i) => ({ index: i, objectId: slideId(i), title: s.title, notes: s.notes !== null })),
    };
  },
});
