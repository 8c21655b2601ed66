// What partners pushed about someone before they had a proven account: when an account is created
// proven, proves its address or takes a new one, the subjects no account holds that carry its
// e-mail hashes or its userId (orphans) are folded into the account's subject, their entries and
// links with them. The repositories run the statements; the rules of the merge are here.
import type { Db } from '../db/handle.js';
import type { Write } from '../db/handle.js';
import { deleteLink, linkOnSubject, linksOfSubject, moveLinkToSubject } from '../repositories/links.js';
import { deleteEntry, entriesOfSubject, entryOnSubject, moveEntryToSubject } from '../repositories/partner-identities.js';
import { deleteSubject, orphanSubjectsNaming, releaseHandle, subjectOfUser } from '../repositories/people.js';
import { insertUser, type NewUserInput, type User } from '../repositories/users.js';

/**
 * Folds the orphan subjects that name `user` into the account's subject. On a clash for one
 * partner and service the newer entry wins; a partner linked on both keeps the account's link.
 */
export async function absorbOrphanSubjects(w: Write, user: User, now: number): Promise<void> {
  const target = await subjectOfUser(w, user.id, now);
  const orphans: number[] = [];
  for (const s of await orphanSubjectsNaming(w, user)) {
    // A subject with another address's hashes that matches only by the userId is a deleted account
    // whose userId is now this account's: a different person. It keeps its entries under its hashes
    // and gives up the name.
    const otherPerson = (s.email_md5 !== null && s.email_md5 !== user.email_md5) || (s.email_sha256 !== null && s.email_sha256 !== user.email_sha256);
    if (otherPerson) await releaseHandle(w, s.id);
    else orphans.push(s.id);
  }
  for (const orphan of orphans) {
    for (const e of await entriesOfSubject(w, orphan)) {
      const clash = await entryOnSubject(w, e.partner_id, target, e.svc_id);
      if (!clash) {
        await moveEntryToSubject(w, e.id, target);
      } else if (clash.updated_at < e.updated_at) {
        await deleteEntry(w, clash.id);
        await moveEntryToSubject(w, e.id, target);
      } else {
        await deleteEntry(w, e.id);
      }
    }
    for (const l of await linksOfSubject(w, orphan)) {
      if (await linkOnSubject(w, l.partner_id, target)) await deleteLink(w, l.id);
      else await moveLinkToSubject(w, l.id, target);
    }
    await deleteSubject(w, orphan);
  }
}

/** A new account in its own transaction; one created proven takes in what partners pushed about it. */
export async function createUser(db: Db, input: NewUserInput, now: number): Promise<User> {
  return db.write(async (w) => {
    const user = await insertUser(w, input, now);
    if (input.proven) await absorbOrphanSubjects(w, user, now);
    return user;
  });
}
