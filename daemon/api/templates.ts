/**
 * File templates (GitLab 8.13 lib/api/templates.rb): `/templates/gitignores`, `/templates/gitlab_ci_ymls` and
 * `/templates/licenses`, each a list and one by name, and 8.13's deprecated aliases without `templates/` (removed in
 * 9.0). Public, as 8.13 (no `authenticate!`): a signed-in caller's name fills a license's holder when `fullname` is
 * not given.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../errors.js';
import { findLicense, findTemplate, listLicenses, TEMPLATE_KINDS, templateNames, type TemplateKind } from '../services/templates/index.js';
import { Bool } from './params.js';

const S = Type.String();
const TemplateListSchema = Type.Array(Type.Object({ name: S }));
const TemplateSchema = Type.Object({ name: S, content: S });
const LicenseSchema = Type.Object({
  key: S, name: S, nickname: Type.Union([S, Type.Null()]), popular: Type.Boolean(), html_url: S, source_url: Type.Union([S, Type.Null()]),
  description: S, conditions: Type.Array(S), permissions: Type.Array(S), limitations: Type.Array(S), content: S,
});
const NameParams = Type.Object({ name: Type.String({ description: 'the template name' }) });
const LicenseQuery = Type.Object({
  project: Type.Optional(Type.String({ description: 'fills the project placeholder of the text' })),
  fullname: Type.Optional(Type.String({ description: "fills the copyright holder (default: the caller's name)" })),
});
const PopularQuery = Type.Object({ popular: Type.Optional(Bool({ description: 'only the popular licenses' })) });

/** Registers the template routes (no database: served alike on both engines). */
export default async function templateRoutes(api: FastifyInstance): Promise<void> {
  const config = { public: true };
  for (const prefix of ['/templates/', '/']) {
    const tags = prefix === '/' ? ['templates (deprecated aliases)'] : ['templates'];

    api.get(`${prefix}licenses`, {
      config, schema: { tags, summary: 'The license templates', querystring: PopularQuery, response: { 200: Type.Array(LicenseSchema) } },
    }, async (request) => listLicenses(!!(request.query as { popular?: boolean }).popular));

    api.get(`${prefix}licenses/:name`, {
      config, schema: { tags, summary: 'One license, its text filled in', params: NameParams, querystring: LicenseQuery, response: { 200: LicenseSchema } },
    }, async (request) => {
      const q = request.query as { project?: string; fullname?: string };
      const license = findLicense((request.params as { name: string }).name, {
        project: q.project || undefined, fullname: q.fullname || request.user?.name || undefined,
      });
      if (!license) throw notFound('License');
      return license;
    });

    for (const kind of Object.keys(TEMPLATE_KINDS) as TemplateKind[]) {
      api.get(`${prefix}${kind}`, {
        config, schema: { tags, summary: `The ${kind} templates`, response: { 200: TemplateListSchema } },
      }, async () => templateNames(kind).map((name) => ({ name })));

      api.get(`${prefix}${kind}/:name`, {
        config, schema: { tags, summary: `One of the ${kind} templates`, params: NameParams, response: { 200: TemplateSchema } },
      }, async (request) => {
        const found = findTemplate(kind, (request.params as { name: string }).name);
        if (!found) throw notFound(TEMPLATE_KINDS[kind].singular);
        return found;
      });
    }
  }
}
