// "Issue / Rotate the api_token": the answer is the page itself, with the token shown this once
// (never a redirect, whose URL could carry it into a history or a log).
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { issueToken, memberPartner } from '../../../services/partner-dashboard.js';
import { formSchema, SITE } from '../../http.js';
import { dashboardPage, partnerParams } from './page.js';

export function registerTokenIssue(app: TypedApp, ctx: AppContext): void {
  const span = (seconds: number) => (seconds >= 7200 ? `${Math.round(seconds / 3600)} hours` : seconds >= 3600 ? '1 hour' : `${seconds} seconds`);
  app.post('/partners/:id/token', { config: SITE, schema: { ...formSchema({}), params: partnerParams } }, async (request, reply) => {
    const partner = await memberPartner(ctx, request.user, Number(request.params.id));
    const { token, graceSeconds } = await issueToken(ctx, partner);
    const after = await memberPartner(ctx, request.user, partner.id);
    const note =
      graceSeconds > 0
        ? `The previous api_token keeps working for ${span(graceSeconds)}, then stops.`
        : 'Store it on your server; send it only in POST bodies.';
    return dashboardPage(ctx, request, reply, after, 'keys', { revealed: { what: 'api_token', value: token, note } });
  });
}
