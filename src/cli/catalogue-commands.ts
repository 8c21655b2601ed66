import fs from 'node:fs';
import type { Command } from 'commander';
import { parseCatalogueFile, serialiseCatalogue, type CatalogueEntry } from '../catalogue/catalogue-file.js';
import { normaliseSvcId } from '../domain/svc-id.js';
import { listCatalogue, setServiceDisabled, upsertServices } from '../repositories/catalogue.js';
import { verificationCoverage } from '../verification/coverage.js';
import { CliError, print, type Out } from './output.js';
import { withContext } from './run.js';

const SETTABLE: Record<string, keyof CatalogueEntry> = {
  name: 'svcName',
  url: 'svcURL',
  'left-url': 'svcLeftURL',
  'right-url': 'svcRightURL',
  'mobile-url': 'svcMobileURL',
  'iphone-url': 'svcIphoneURL',
  favicon: 'svcFavicon',
  icon: 'svcIcon',
  'iphone-icon': 'svcIphoneIcon',
  pattern: 'regexCheck',
};

/** The subcommands of `idsvc catalogue` (the group itself, with its description, is program.ts's). */
export function catalogueCommands(cat: Command, run: () => Out): void {
  cat
    .command('import <file>')
    .description('add or replace services from a catalogue file (the format `export --json` writes)')
    .action(async (file: string) =>
      withContext(run(), async (ctx, out) => {
        let json: unknown;
        try {
          json = JSON.parse(fs.readFileSync(file, 'utf8'));
        } catch (e) {
          throw new CliError(`cannot read ${file}: ${e instanceof Error ? e.message : String(e)}`);
        }
        let entries: CatalogueEntry[];
        try {
          entries = parseCatalogueFile(json);
        } catch (e) {
          throw new CliError(e instanceof Error ? e.message : String(e));
        }
        const r = await ctx.db.write((w) => upsertServices(w, entries, ctx.clock.now()));
        print(out, r, () => `imported ${entries.length} services: ${r.added} added, ${r.updated} updated`);
      }),
    );

  cat
    .command('export [file]')
    .description('write the whole catalogue (disabled services included) in the import format')
    .action(async (file: string | undefined) =>
      withContext(run(), async (ctx, out) => {
        const text = serialiseCatalogue(await listCatalogue(ctx.db, true));
        if (file) fs.writeFileSync(file, text);
        else out.stdout(text);
      }),
    );

  cat.command('list').action(async () =>
    withContext(run(), async (ctx, out) => {
      const all = await listCatalogue(ctx.db, true);
      print(out, all, () =>
        all.map((e) => `${e.svcId.padEnd(24)} ${e.disabled ? '[disabled] ' : ''}${e.svcName}  ${e.svcLeftURL}{id}${e.svcRightURL}`).join('\n'),
      );
    }),
  );

  const set = cat.command('set <svcId>').description('change fields of a service, or add a new one (--name and --left-url needed then)');
  for (const flag of Object.keys(SETTABLE)) set.option(`--${flag} <value>`);
  set.option('--enable', 'enable a disabled service');
  set.action(async (rawSvcId: string, o: Record<string, string | boolean | undefined>) =>
    withContext(run(), async (ctx, out) => {
      const svcId = normaliseSvcId(rawSvcId);
      const all = await listCatalogue(ctx.db, true);
      const current = all.find((e) => e.svcId === svcId);
      const draft: Record<string, unknown> = current
        ? { ...current }
        : {
            svcId,
            svcName: '',
            svcURL: '',
            svcLeftURL: '',
            svcRightURL: '',
            svcMobileURL: '',
            svcIphoneURL: '',
            svcFavicon: '',
            svcIcon: '',
            svcIphoneIcon: '',
            regexCheck: null,
            urlBuilder: null,
            disabled: false,
          };
      for (const [flag, field] of Object.entries(SETTABLE)) {
        const key = flag.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
        const v = o[key];
        if (typeof v === 'string') draft[field] = field === 'regexCheck' && v === '' ? null : v;
      }
      if (o.enable) draft.disabled = false;
      let entry: CatalogueEntry;
      try {
        [entry] = parseCatalogueFile({ format: 'idsvc-catalogue/1', services: [draft] }) as [CatalogueEntry];
      } catch (e) {
        throw new CliError(e instanceof Error ? e.message : String(e));
      }
      await ctx.db.write((w) => upsertServices(w, [entry], ctx.clock.now()));
      print(out, entry, () => `${current ? 'updated' : 'added'} ${svcId}`);
    }),
  );

  cat
    .command('disable <svcId>')
    .description('hide a service from the catalogue and from answers; its entries are kept')
    .option('--enable', 'undo: enable it again')
    .action(async (rawSvcId: string, o: { enable?: boolean }) =>
      withContext(run(), async (ctx, out) => {
        const svcId = normaliseSvcId(rawSvcId);
        const ok = await ctx.db.write((w) => setServiceDisabled(w, svcId, !o.enable, ctx.clock.now()));
        if (!ok) throw new CliError(`no service ${svcId}`);
        print(out, { svcId, disabled: !o.enable }, () => `${svcId} ${o.enable ? 'enabled' : 'disabled'}`);
      }),
    );

  cat
    .command('coverage')
    .description('of the most popular enabled services, how many a person can verify without an operator, and by which methods')
    .option('--top <n>', 'how many of the most popular services', '50')
    .action(async (o: { top: string }) =>
      withContext(run(), async (ctx, out) => {
        if (!/^\d{1,4}$/.test(o.top) || Number(o.top) < 1) throw new CliError('--top must be a whole number from 1 to 9999');
        const c = await verificationCoverage(ctx, Number(o.top));
        print(out, c, () => {
          const byMethod = new Map<string, number>();
          for (const s of c.services) for (const m of s.methods) byMethod.set(m, (byMethod.get(m) ?? 0) + 1);
          const lines = c.services.map((s) => `${s.svcId.padEnd(24)} ${s.methods.length > 0 ? s.methods.join(', ') : '-'}`);
          const methods = [...byMethod].map(([m, n]) => `${m} ${n}`).join(', ');
          return [
            ...lines,
            '',
            `${c.verifiable} of the ${c.services.length} most popular services can be verified without an operator${methods ? ` (${methods})` : ''}`,
          ].join('\n');
        });
      }),
    );
}
