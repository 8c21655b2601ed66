// A service of the catalogue: enable, disable, or edit its name, main address and profile-URL template.
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { TypedApp } from '../../../http/typed-app.js';
import { ConsoleError, editService, setServiceEnabled } from '../../../services/operator-console.js';
import { formSchema, optionalText, seeOther, SITE } from '../../http.js';
import { cataloguePage, svcIdParams } from './pages.js';

export function registerCatalogueChange(app: TypedApp, ctx: AppContext): void {
  app.post(
    '/console/catalogue/:svcId',
    {
      config: SITE,
      schema: {
        ...formSchema({
          action: Type.Union([Type.Literal('enable'), Type.Literal('disable'), Type.Literal('edit')]),
          svc_name: optionalText(200),
          svc_url: optionalText(2000),
          svc_left_url: optionalText(2000),
          svc_right_url: optionalText(2000),
        }),
        params: svcIdParams,
      },
    },
    async (request, reply) => {
      const svcId = request.params.svcId;
      const b = request.body;
      try {
        if (b.action === 'edit')
          await editService(ctx, request.user, svcId, {
            svcName: (b.svc_name ?? '').trim(),
            svcURL: (b.svc_url ?? '').trim(),
            svcLeftURL: (b.svc_left_url ?? '').trim(),
            svcRightURL: (b.svc_right_url ?? '').trim(),
          });
        else await setServiceEnabled(ctx, request.user, svcId, b.action === 'enable');
      } catch (e) {
        if (!(e instanceof ConsoleError)) throw e;
        return cataloguePage(ctx, request, reply, svcId, { error: e.message }, 400);
      }
      return seeOther(reply, `/console/catalogue?q=${encodeURIComponent(svcId)}&msg=saved`);
    },
  );
}
