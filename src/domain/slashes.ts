// A loop, not /\/+$/: that regex retries from every slash of a run that does not end the string,
// so a path of many slashes followed by anything else costs time quadratic in its length.

/** The text without the slashes at its end. */
export function withoutTrailingSlashes(path: string): string {
  let end = path.length;
  while (end > 0 && path.charCodeAt(end - 1) === 0x2f) end--;
  return path.slice(0, end);
}
