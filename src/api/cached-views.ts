// The two reads the answer cache serves (services/answer-cache.ts): a person's view as one reader
// may see it, kept per view, reader and identifier. The public view without proof is the same for
// every api_key (SPEC §3 rule 0), so all keys share it; anything else is kept per partner.
import type { AppContext } from '../context.js';
import type { ParsedIdentifier } from '../domain/identifiers.js';
import { partnerTag, type AnswerTags } from '../services/answer-cache.js';
import { privateView, publicView, type Evidence, type PrivateAccess, type Reader, type ViewEntry } from '../services/partner-data.js';

/** Names the person as the lookups do: an address is looked up by both its digests. */
function identifierKey(id: ParsedIdentifier): string {
  switch (id.kind) {
    case 'md5':
      return `m:${id.md5}`;
    case 'sha256':
      return `h:${id.sha256}`;
    case 'email':
      return `e:${id.md5}:${id.sha256}`;
    case 'userId':
      return `u:${id.userId}`;
  }
}

export type View = { view: 'public'; reader: Reader } | { view: 'private'; access: PrivateAccess };

/**
 * `make` turns the view's entries into what is kept (an answer's body, a widget's boot script); `what`
 * names that form in the key, and so also whether it shows the evidence of verified marks (JSON
 * answers do); its `kept` says whether the cache may keep what it makes (a body sent once need not
 * be shaped for keeping). Errors (not_found) are answered, never kept. An answer from memory comes at once,
 * not as a promise; an error may be thrown at once too.
 */
export function cachedView<T>(
  ctx: AppContext,
  what: string,
  id: ParsedIdentifier,
  view: View,
  evidence: Evidence,
  make: (entries: ViewEntry[], kept: boolean) => T,
): T | Promise<T> {
  const partner = view.view === 'private' ? view.access.partner : view.reader === 'anyone' ? null : view.reader.partner;
  const key = `${what}|${view.view}|${partner?.id ?? '-'}|${identifierKey(id)}`;
  // The partner row was read before this lookup: an answer rendered from it is kept only if it is still current.
  const readBefore = partner ? { tag: partnerTag(partner.id), at: ctx.partners.readAt(partner) } : undefined;
  const render = async (tags: AnswerTags, kept: boolean) => {
    if (partner) tags.add(partnerTag(partner.id));
    // A private view reads the database itself, so a partner reads its own writes; a public one
    // not kept in memory may come from a replica slightly behind (docs/spec.md, "Read replicas").
    const entries =
      view.view === 'private'
        ? await privateView(ctx, view.access, id, evidence, tags)
        : await publicView(ctx, view.reader, id, evidence, tags, kept ? ctx.db : ctx.db.behind());
    return make(entries, kept);
  };
  const options = { readBefore, mayLag: view.view === 'public' };
  // Answered at once when the catalogue and the answer are both in memory.
  const catalogue = ctx.catalogue.get();
  return catalogue instanceof Promise
    ? catalogue.then((c) => ctx.answers.get(key, c.version, render, options))
    : ctx.answers.get(key, catalogue.version, render, options);
}
