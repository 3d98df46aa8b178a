/**
 * /api/v3/projects/:id/<awardables>/:<awardable_id>/award_emoji and .../notes/:note_id/award_emoji (reference
 * 2.11): list, get, award and remove. `awardEmojiRoutes(kind)` builds them for one kind of noteable (merge requests
 * mount it in their room); the default export mounts them for issues and snippets.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { badRequest, notFound, notFoundMessage, unauthorized } from '../errors.js';
import {
  canAward, countAwards, createAward, findAward, listAwards, removeAward, rubyErrors, type Awardable,
} from '../services/collaboration/award-emoji.js';
import { findNote } from '../services/collaboration/notes.js';
import { AwardEmojiSchema, presentAward, presentAwards } from './entities/award-emoji.js';
import { ISSUE_NOTEABLES, loadNoteable, noteableOf, SNIPPET_NOTEABLES, type NoteableKind } from './noteables.js';
import { paginate } from './pagination.js';
import { PageParams } from './params.js';
import { callerOf, dropBlankParams, loadProject } from './project-scope.js';

const AwardBody = Type.Object({
  name: Type.Optional(Type.String({ description: 'emoji name without colons (required); `+1` is thumbsup, `-1` thumbsdown' })),
});

/** Builds the award emoji routes of one kind of noteable and of its notes. */
export function awardEmojiRoutes(kind: NoteableKind): FastifyPluginAsync {
  return async function (api: FastifyInstance): Promise<void> {
    const { ctx } = api;
    const tags = [kind.tag, 'award emoji'];
    const read = [loadProject('read_project'), loadNoteable(kind)];

    /** The issue (or merge request, snippet) itself, or its note `:note_id` (404 `404 Not found` when absent). */
    const awardableOf = async (request: FastifyRequest, onNote: boolean): Promise<Awardable> => {
      const noteable = noteableOf(request);
      if (!onNote) return { type: noteable.type, id: noteable.id, authorId: noteable.authorId };
      const note = await findNote(ctx.data, noteable, Number((request.params as { note_id: number }).note_id));
      if (!note) throw notFoundMessage('404 Not found');
      return { type: 'Note', id: note.id, authorId: note.authorId };
    };

    for (const onNote of [false, true]) {
      const base = `/projects/:id/${kind.segment}/:${kind.idParam}${onNote ? '/notes/:note_id' : ''}/award_emoji`;
      const ids = { id: Type.String(), [kind.idParam]: Type.String(), ...(onNote ? { note_id: Type.Integer() } : {}) };
      const Params = Type.Object(ids);
      const AwardParams = Type.Object({ ...ids, award_id: Type.Integer() });

      api.get(base, {
        preValidation: read,
        schema: { tags, params: Params, querystring: Type.Object(PageParams), response: { 200: Type.Array(AwardEmojiSchema) } },
      }, async (request, reply) => {
        const awardable = await awardableOf(request, onNote);
        return presentAwards(ctx, await paginate(request, reply, ctx.data, (q) => countAwards(q, awardable), (q, limit, offset) => listAwards(q, awardable, limit, offset)));
      });

      api.get(`${base}/:award_id`, {
        preValidation: read,
        schema: { tags, params: AwardParams, response: { 200: AwardEmojiSchema } },
      }, async (request) => {
        const award = await findAward(ctx.data, await awardableOf(request, onNote), (request.params as { award_id: number }).award_id);
        if (!award) throw notFoundMessage('404 Not found');
        return presentAward(ctx, award);
      });

      api.post(base, {
        preValidation: [...read, dropBlankParams],
        schema: { tags, params: Params, body: AwardBody, response: { 201: AwardEmojiSchema } },
      }, async (request, reply) => {
        const user = callerOf(request);
        const awardable = await awardableOf(request, onNote);
        const name = (request.body as { name?: string }).name;
        if (typeof name !== 'string' || name.trim() === '') throw badRequest('name');
        // 8.x: an author voting on their own issue, MR or note is refused as if the awardable were not there.
        if (!canAward(user, awardable, name)) throw notFound('Award Emoji');
        const r = await createAward(ctx, user, awardable, name);
        if ('errors' in r) throw notFound(`Award Emoji ${rubyErrors(r.errors)}`);
        return reply.code(201).send(await presentAward(ctx, r.award));
      });

      api.delete(`${base}/:award_id`, {
        preValidation: read,
        schema: { tags, params: AwardParams, response: { 200: AwardEmojiSchema } },
      }, async (request) => {
        const user = callerOf(request);
        const award = await findAward(ctx.data, await awardableOf(request, onNote), (request.params as { award_id: number }).award_id);
        if (!award) throw notFoundMessage('404 Not found');
        if (award.userId !== user.id && !user.isAdmin) throw unauthorized();
        const shown = await presentAward(ctx, award);
        await removeAward(ctx, award);
        return shown;
      });
    }
  };
}

/** Registers the award emoji routes of issues, snippets and their notes. */
export default async function awardEmojiRoutesForIssues(api: FastifyInstance): Promise<void> {
  await api.register(awardEmojiRoutes(ISSUE_NOTEABLES));
  await api.register(awardEmojiRoutes(SNIPPET_NOTEABLES));
}
