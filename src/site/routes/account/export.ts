// The "Download my data" button: everything held about the account, as one JSON file.
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { buildExport } from '../../export.js';
import { formSchema, SITE } from '../../http.js';

export function registerExport(app: TypedApp, ctx: AppContext): void {
  app.post('/account/export', { config: SITE, schema: formSchema({}) }, async (request, reply) => {
    const user = request.user;
    const data = await buildExport(ctx, user);
    const day = new Date(ctx.clock.now()).toISOString().slice(0, 10);
    return reply
      .type('application/json; charset=utf-8')
      .header('Content-Disposition', `attachment; filename="idsvc-${user.user_id}-${day}.json"`)
      .header('Cache-Control', 'no-store')
      .send(JSON.stringify(data, null, 2));
  });
}
