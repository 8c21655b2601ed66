// Service ids are lower-case in the catalogue (SPEC §11). Whoever names one, a partner in a path,
// a form on the site or an operator at the CLI, may write it in any case: `GitHub` is `github`
// everywhere, never found by one operation and missed by another.
export function normaliseSvcId(raw: string): string {
  return raw.trim().toLowerCase();
}
