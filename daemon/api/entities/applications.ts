/** Presenter of OAuth applications (the shape GitLab later gave /applications; the secret only when just created). */
import { Type } from '@sinclair/typebox';
import type { OauthApplicationRow } from '../../db/schema-oauth.js';

/** An application without its secret: `application_id` is the OAuth client_id, `callback_url` its redirect URIs. */
export function applicationEntity(a: OauthApplicationRow) {
  return { id: a.id, application_id: a.uid, application_name: a.name, callback_url: a.redirectUri, scopes: a.scopes };
}

/** Response schema of an application. */
export const ApplicationSchema = Type.Object({
  id: Type.Integer(), application_id: Type.String(), application_name: Type.String(), callback_url: Type.String(), scopes: Type.String(),
});
/** Response schema of a just-registered application: the only answer that carries `secret`. */
export const ApplicationWithSecretSchema = Type.Object({ ...ApplicationSchema.properties, secret: Type.String() });
