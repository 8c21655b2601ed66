// The catalogue's services whose profile pages are known to show the person's own links with
// rel="me", so that a backlink placed there proves the identity: the fediverse servers (profile
// fields), the code forges that mark a profile's website and social links so (GitHub, GitLab,
// Gitea and Forgejo), Pixelfed and Gravatar. The rel="me" check still runs on any profile page
// (a person's own site on any service may link back); this list only says where a person can count
// on it, which is what `idsvc catalogue coverage` reports. An operator who knows another adds it here.
export const REL_ME_SERVICES: ReadonlySet<string> = new Set([
  'mastodon',
  'mastodoncloud',
  'mastodonsocial',
  'mastodonxyz',
  'mstdnsocial',
  'socialtchncsde',
  'chaos',
  'chaossocial',
  'pixelfedsocial',
  'github',
  'gitlab',
  'gnomevcs',
  'codeberg',
  'gitea',
  'gravatar',
]);
