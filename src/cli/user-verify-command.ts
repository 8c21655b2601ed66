// `idsvc user verify <user> <svcId> [--clear]`: the operator's verified mark (SPEC §3 rule 6).
import type { Command } from 'commander';
import { normaliseSvcId } from '../domain/svc-id.js';
import { findUserForOperator } from '../repositories/users.js';
import { NoCentralEntryError, ProvenByRelMeError, setOperatorMark } from '../services/operator-mark.js';
import { CliError, print, type Out } from './output.js';
import { withContext } from './run.js';

export function userVerifyCommand(user: Command, run: () => Out): void {
  user
    .command('verify <user> <svcId>')
    .description("mark a central entry verified by the operator (--clear removes the operator's mark); linked partners are told")
    .option('--clear', "remove the operator's mark")
    .action(async (who: string, rawSvcId: string, o: { clear?: boolean }) =>
      withContext(run(), async (ctx, out) => {
        const u = await findUserForOperator(ctx.db, who);
        if (!u) throw new CliError(`no user ${who.includes('@') ? 'with that e-mail address' : who}`);
        const svcId = normaliseSvcId(rawSvcId);
        const svc = (await ctx.catalogue.get()).byId.get(svcId);
        if (!svc) throw new CliError(`no service ${svcId} in the catalogue (or it is disabled)`);
        let result: Awaited<ReturnType<typeof setOperatorMark>>;
        try {
          result = await setOperatorMark(ctx, u, svc, !o.clear);
        } catch (e) {
          if (e instanceof NoCentralEntryError || e instanceof ProvenByRelMeError) throw new CliError(e.message);
          throw e;
        }
        const { outcome, entry } = result;
        const verified = entry.verified;
        const state = verified ? `verified by ${entry.verified_by === 'operator' ? 'the operator' : 'its rel="me" link'}` : 'not verified';
        print(
          out,
          { userId: u.user_id, svcId, usrSvcId: entry.usr_svc_id, verified, verified_by: entry.verified_by, changed: outcome !== 'unchanged' },
          () => `${u.user_id} ${svcId} (${entry.usr_svc_id}): ${state}${outcome === 'unchanged' ? ' (unchanged)' : ''}`,
        );
      }),
    );
}
